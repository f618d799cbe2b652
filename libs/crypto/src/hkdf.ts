import { createHmac, createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';
import { CryptoError } from './errors.js';

/** HKDF-SHA256 can expand to at most 255 blocks of 32 bytes (RFC 5869). */
export const HKDF_MAX_LENGTH = 255 * 32;

const HASH_LEN = 32;

function checkLength(length: number): void {
  if (!Number.isInteger(length) || length <= 0 || length > HKDF_MAX_LENGTH) {
    throw new CryptoError('KEY_LENGTH_INVALID', `invalid key length ${length}: must be between 1 and ${HKDF_MAX_LENGTH}`, {
      details: { length, max: HKDF_MAX_LENGTH },
    });
  }
}

/**
 * RFC 5869 HKDF-SHA256 (extract + expand). An empty salt is the RFC default (32 zero bytes),
 * which HMAC treats identically to an empty key.
 */
export function deriveKey(secret: Uint8Array, salt: Uint8Array, info: string | Uint8Array, length: number): Buffer {
  checkLength(length);
  const infoBytes = typeof info === 'string' ? Buffer.from(info, 'utf8') : info;
  return Buffer.from(hkdfSync('sha256', secret, salt, infoBytes, length));
}

/**
 * HKDF-SHA256 for many derivations from one secret and salt: the extract step (PRK = HMAC(salt,
 * secret)) runs once in the constructor, `expand` runs only the per-info expand step
 * (T(i) = HMAC(PRK, T(i-1) | info | i)). Same output as deriveKey, at less than half its cost per
 * call, which matters on the keyservice's hot path.
 */
export class HkdfSha256 {
  readonly #prk: KeyObject;

  constructor(secret: Uint8Array, salt: Uint8Array) {
    const hmacKey = salt.length === 0 ? Buffer.alloc(HASH_LEN) : salt;
    this.#prk = createSecretKey(createHmac('sha256', hmacKey).update(secret).digest());
  }

  /** The first `length` bytes of the expansion of `info` (1 <= length <= HKDF_MAX_LENGTH). */
  expand(info: string | Uint8Array, length: number): Buffer {
    checkLength(length);
    const infoBytes = typeof info === 'string' ? Buffer.from(info, 'utf8') : info;
    const blocks = Math.ceil(length / HASH_LEN);
    const out = Buffer.allocUnsafe(blocks * HASH_LEN);
    let previous: Buffer | undefined;
    for (let i = 1; i <= blocks; i++) {
      const hmac = createHmac('sha256', this.#prk);
      if (previous) hmac.update(previous);
      previous = hmac.update(infoBytes).update(Uint8Array.of(i)).digest();
      previous.copy(out, (i - 1) * HASH_LEN);
    }
    return out.subarray(0, length);
  }

  /** Keeps key material out of util.inspect / console output. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return 'HkdfSha256 { [REDACTED] }';
  }

  toJSON(): string {
    return '[REDACTED]';
  }
}
