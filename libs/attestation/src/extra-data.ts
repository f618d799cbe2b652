/**
 * Binding of caller data into attestation evidence (docs/protocol/vtpm-attestation.md). The cluster ID
 * derivation that belongs next to these lives in `@asterism/crypto` (`deriveClusterId`).
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * `SHA256(userData || nonce)`: the 32 bytes every variant embeds in its evidence so that one
 * document is bound both to the peer's nonce and to the user data (for aTLS: the TLS key hash).
 */
export function makeExtraData(userData: Uint8Array, nonce: Uint8Array): Buffer {
  return createHash('sha256').update(userData).update(nonce).digest();
}

/**
 * `SHA256(instanceInfo || extraData)`: the qualifying data of vTPM quotes (docs/protocol/vtpm-attestation.md),
 * which additionally binds the variant's instance info (an empty/absent one hashes as empty).
 */
export function makeTpmNonce(instanceInfo: Uint8Array | null | undefined, extraData: Uint8Array): Buffer {
  return createHash('sha256')
    .update(instanceInfo ?? new Uint8Array(0))
    .update(extraData)
    .digest();
}

/**
 * Compares two extra-data values the way report-data fields are compared: the shorter one is
 * right-padded with zero bytes first (report data is 64 bytes, extra data 32), so `ABAB` equals
 * `ABAB0000` but `0000ABAB` does not equal `ABAB`. Symmetric; constant time for equal lengths.
 */
export function compareExtraData(a: Uint8Array, b: Uint8Array): boolean {
  const length = Math.max(a.length, b.length);
  const pa = Buffer.alloc(length);
  const pb = Buffer.alloc(length);
  pa.set(a);
  pb.set(b);
  return timingSafeEqual(pa, pb);
}
