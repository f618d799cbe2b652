/**
 * Public keys from SubjectPublicKeyInfo DER, as the handshake and join paths import them (peer
 * certificates, kubelet CSRs). Node's DER import runs OpenSSL 3's generic decoder search, which
 * costs ~0.1 ms per P-256 key and ~0.07 ms per Ed25519 key on the project's machines; the same
 * keys imported as JWK skip that search (~0.065 ms and ~0.007 ms). The SPKIs recognised here are
 * the exact DER layouts of an uncompressed P-256 / P-384 point and of an Ed25519 key; anything
 * else takes the DER path, so the result (and every error) is the one DER import gives.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';

/** SPKI prefixes (SEQUENCE { AlgorithmIdentifier, BIT STRING header }) and the JWK they map to. */
const LAYOUTS: ReadonlyArray<{ prefix: Buffer; keyBytes: number; jwk: (key: Buffer) => Record<string, string> }> = [
  {
    // id-ecPublicKey, prime256v1; BIT STRING of 66 bytes: 0 unused bits, 0x04, X, Y.
    prefix: Buffer.from('3059301306072a8648ce3d020106082a8648ce3d03010703420004', 'hex'),
    keyBytes: 64,
    jwk: (k) => ({ kty: 'EC', crv: 'P-256', x: k.subarray(0, 32).toString('base64url'), y: k.subarray(32).toString('base64url') }),
  },
  {
    // id-ecPublicKey, secp384r1; BIT STRING of 98 bytes.
    prefix: Buffer.from('3076301006072a8648ce3d020106052b81040022036200' + '04', 'hex'),
    keyBytes: 96,
    jwk: (k) => ({ kty: 'EC', crv: 'P-384', x: k.subarray(0, 48).toString('base64url'), y: k.subarray(48).toString('base64url') }),
  },
  {
    // id-Ed25519; BIT STRING of 33 bytes.
    prefix: Buffer.from('302a300506032b6570032100', 'hex'),
    keyBytes: 32,
    jwk: (k) => ({ kty: 'OKP', crv: 'Ed25519', x: k.toString('base64url') }),
  },
];

/**
 * The public key of a DER SubjectPublicKeyInfo; same result as
 * `createPublicKey({ key: spki, format: 'der', type: 'spki' })`, faster for the common layouts.
 * A point that is not on its curve is refused by either path.
 */
export function publicKeyFromSpki(spki: Uint8Array): KeyObject {
  const der = Buffer.from(spki.buffer, spki.byteOffset, spki.byteLength);
  for (const l of LAYOUTS) {
    if (der.length === l.prefix.length + l.keyBytes && der.subarray(0, l.prefix.length).equals(l.prefix)) {
      return createPublicKey({ key: l.jwk(der.subarray(l.prefix.length)), format: 'jwk' });
    }
  }
  return createPublicKey({ key: der, format: 'der', type: 'spki' });
}
