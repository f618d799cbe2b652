import { CLUSTER_ID_INFO, DEK_PREFIX } from './constants.js';
import { CryptoError } from './errors.js';
import { deriveKey, HkdfSha256 } from './hkdf.js';

/** The cluster's root secret: the CLI generates 32 random bytes for each part. */
export interface MasterSecret {
  key: Uint8Array;
  salt: Uint8Array;
}

/**
 * The "cluster KMS": every data key is HKDF(master.key, master.salt, info = id, length).
 * Ids are used verbatim and are case-sensitive; callers prefix them with `key-` (see dataKeyInfo).
 */
export class ClusterKms {
  /** The extract step is done once; each data key only costs the expand step. */
  readonly #hkdf: HkdfSha256;

  constructor(master: MasterSecret) {
    if (master.key.length === 0) throw new CryptoError('SECRET_EMPTY', 'master key is empty');
    if (master.salt.length === 0) throw new CryptoError('SECRET_EMPTY', 'master salt is empty');
    this.#hkdf = new HkdfSha256(master.key, master.salt);
  }

  /** Derives the data-encryption key for `id` (already prefixed, e.g. `key-measurementSecret`). */
  getDek(id: string, length: number): Buffer {
    return this.#hkdf.expand(id, length);
  }

  /** Keeps key material out of util.inspect / console output. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return 'ClusterKms { [REDACTED] }';
  }

  toJSON(): string {
    return '[REDACTED]';
  }
}

/** The HKDF info the keyservice uses for a requested data key id. */
export function dataKeyInfo(dataKeyId: string): string {
  return DEK_PREFIX + dataKeyId;
}

/** clusterID = HKDF(measurementSecret, measurementSalt, "key-clusterID", 32). */
export function deriveClusterId(measurementSecret: Uint8Array, measurementSalt: Uint8Array): Buffer {
  return deriveKey(measurementSecret, measurementSalt, CLUSTER_ID_INFO, 32);
}

/** The state-disk key id as the InitServer derives it: the disk UUID, lower-cased. */
export function stateDiskKeyId(diskUuid: string): string {
  return DEK_PREFIX + diskUuid.toLowerCase();
}
