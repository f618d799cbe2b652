/**
 * Comparing the TPM attestation key of a document with a key the cloud vouches for (an X.509
 * AK certificate, a PEM public key from a cloud API), by their canonical SPKI encoding.
 */
import { createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import { decodePublic, publicKeyObject, TPM_ALG, type TpmtPublic } from '@asterism/tpm';
import { AttestationError } from '../errors.js';
import type { VtpmAttestationDocument } from '../vtpm/document.js';

/** The document's `ak_pub`, decoded (AK_UNTRUSTED when it does not decode). */
export function documentAkPublic(doc: VtpmAttestationDocument): TpmtPublic {
  try {
    return decodePublic(doc.attestation?.akPub ?? Buffer.alloc(0));
  } catch (err) {
    throw new AttestationError('AK_UNTRUSTED', `decoding ak_pub: ${(err as Error).message}`, { cause: err, details: { field: 'ak_pub' } });
  }
}

/** Whether two public keys are the same key (same SPKI DER). */
export function sameKey(a: KeyObject, b: KeyObject): boolean {
  return a.export({ type: 'spki', format: 'der' }).equals(b.export({ type: 'spki', format: 'der' }));
}

/**
 * Requires the TPM AK to be an RSA key equal to `vouched` (the key the cloud vouches for);
 * AK_MISMATCH otherwise, naming `source`.
 */
export function requireAkIs(ak: TpmtPublic, vouched: KeyObject, source: string): void {
  if (ak.type !== TPM_ALG.RSA) throw new AttestationError('AK_MISMATCH', `the document's attestation key is not an RSA key (${source} holds an RSA key)`, { details: { check: 'ak-type', source } });
  if (!sameKey(publicKeyObject(ak), vouched)) {
    throw new AttestationError('AK_MISMATCH', `the document's attestation key (ak_pub) is not the key of the ${source}`, { details: { check: 'ak-key', source } });
  }
}

/** Parses a DER (or PEM) certificate; CERT_INVALID naming `what`. */
export function parseCertificate(bytes: Uint8Array, what: string): X509Certificate {
  try {
    return new X509Certificate(Buffer.from(bytes));
  } catch (err) {
    throw new AttestationError('CERT_INVALID', `${what}: not an X.509 certificate: ${(err as Error).message}`, { cause: err, details: { certificate: what } });
  }
}

/** A PEM `PUBLIC KEY` (PKIX) block as a key; AK_UNTRUSTED naming `what` for anything else. */
export function pkixPublicKeyFromPem(pem: string, what: string): KeyObject {
  const m = /-----BEGIN ([A-Z0-9 ]+)-----/.exec(pem);
  if (!m || m[1] !== 'PUBLIC KEY') {
    throw new AttestationError('AK_UNTRUSTED', `${what} is not a PEM "PUBLIC KEY" block`, { details: { field: what, blockType: m?.[1] ?? null } });
  }
  try {
    return createPublicKey({ key: pem, format: 'pem' });
  } catch (err) {
    throw new AttestationError('AK_UNTRUSTED', `${what}: ${(err as Error).message}`, { cause: err, details: { field: what } });
  }
}
