/**
 * Request targets. The apps' validators are fuzzed by specs in the apps themselves (a tool may not
 * import an app): `apps/joinservice/src/ticket/request-validation.fuzz.spec.ts` and
 * `apps/bootstrapper/src/initserver/init-request.fuzz.spec.ts`, with the helpers below. Here: what
 * the recovery server checks of a Recover message (its KMS and storage URIs and the keys derived
 * from them), which lives in libs/crypto.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClusterKms, encodeClusterKmsUri, NO_STORE_URI, parseKmsUri, parseStorageUri, stateDiskKeyId, STATE_DISK_KEY_LENGTH } from '@asterism/crypto';
import { recoverproto } from '@asterism/proto';
import { NOT_REACHED, type FuzzTarget } from '../gate.js';

/**
 * Kubelet CSRs (EC P-256 and RSA 2048) made by the real openssl, as a joining node sends them;
 * kept in fixtures/ (scripts/make-kubelet-csrs.sh) so the inputs are the same on every run.
 */
export function opensslKubeletCsrs(): Array<{ name: string; der: Buffer }> {
  return ['ec', 'rsa'].map((k) => ({ name: `openssl ${k} kubelet CSR (tools/fuzz/fixtures/kubelet-csr-${k}.der)`, der: readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', `kubelet-csr-${k}.der`)) }));
}

/**
 * `fromJSON` of a protobuf message (the targets feed the JSON mapping, so the JSON mutator reaches
 * the bytes fields), or NOT_REACHED when the input is not JSON: grpc-js refuses a message that
 * does not decode before our code sees it.
 */
export function protoFromJson<T>(b: Buffer, codec: { fromJSON(o: unknown): T }): T | typeof NOT_REACHED {
  try {
    return codec.fromJSON(JSON.parse(b.toString('utf8')));
  } catch {
    return NOT_REACHED;
  }
}

/** The cluster KMS URI of the request seeds (a 32-byte key and salt). */
export const SEED_KMS_URI = encodeClusterKmsUri({ key: Buffer.alloc(32, 9), salt: Buffer.alloc(32, 8) });

/** The request targets of this project. */
export function requestTargets(): FuzzTarget[] {
  return [
    {
      name: 'request.recover',
      parser: "the recovery server's Recover checks: parseStorageUri, parseKmsUri, ClusterKms key derivation (libs/crypto)",
      seeds: [{ name: 'Recover message', bytes: Buffer.from(JSON.stringify(recoverproto.RecoverMessage.toJSON({ kmsUri: SEED_KMS_URI, storageUri: NO_STORE_URI }))) }],
      runs: 2000,
      shape: { json: true },
      run: (b) => {
        const req = protoFromJson(b, recoverproto.RecoverMessage);
        if (req === NOT_REACHED) return req;
        parseStorageUri(req.storageUri);
        const cfg = parseKmsUri(req.kmsUri);
        if (cfg.type === 'cluster-kms') new ClusterKms(cfg.masterSecret).getDek(stateDiskKeyId('8b4d6f1e-2c3a-4b5d-9e7f-0a1b2c3d4e5f'), STATE_DISK_KEY_LENGTH);
        return undefined;
      },
    },
  ];
}
