import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { Issuer } from '@asterism/attestation';
import { certificatePem, derTime, derTlv as tlv, encodeOid, positiveSerial, randomBytes } from '@asterism/crypto';
import { toAtlsError } from './errors.js';

/** ecdsa-with-SHA256 (RFC 5758); parameters absent. */
export const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';
const COMMON_NAME = '2.5.4.3';
/** Subject and issuer CN of every aTLS certificate, as in the reference. */
export const ATLS_SUBJECT_CN = 'Constellation';
/** NotBefore = now - 2 h, NotAfter = now + 2 h (docs/protocol/atls.md). */
export const ATLS_CERT_VALIDITY_SLACK_MS = 2 * 60 * 60 * 1000;

/** A fresh ECDSA P-256 key with the SPKI DER and its SHA-256 (the aTLS user data). */
export interface AtlsKey {
  readonly privateKey: KeyObject;
  /** SEC1 PEM, what `tls.createSecureContext` wants. */
  readonly privateKeyPem: string;
  readonly spkiDer: Buffer;
  /** sha256(SPKI DER): the user data the attestation document binds (docs/protocol/atls.md). */
  readonly userData: Buffer;
}

/** A self-signed aTLS certificate and the key that signed it. */
export interface AtlsCertificate {
  readonly der: Buffer;
  readonly pem: string;
  readonly key: AtlsKey;
}

/** Generates an ECDSA P-256 key (≈0.05 ms; cheaper than any cached alternative). */
export function generateAtlsKey(): AtlsKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  // JWK and SEC1 exports take microseconds; OpenSSL 3.0's SPKI/PKCS#8 encoders take ~0.1 ms each.
  const jwk = publicKey.export({ format: 'jwk' });
  const x = Buffer.from(jwk.x!, 'base64url');
  const y = Buffer.from(jwk.y!, 'base64url');
  if (x.length !== 32 || y.length !== 32) throw new Error('unexpected P-256 JWK coordinate length');
  const spkiDer = Buffer.concat([P256_SPKI_PREFIX, Buffer.from([4]), x, y]);
  return {
    privateKey,
    privateKeyPem: privateKey.export({ type: 'sec1', format: 'pem' }) as string,
    spkiDer,
    userData: createHash('sha256').update(spkiDer).digest(),
  };
}

// SubjectPublicKeyInfo { id-ecPublicKey, prime256v1 } followed by BIT STRING header for a 65-byte point.
const P256_SPKI_PREFIX = Buffer.from('3059301306072a8648ce3d020106082a8648ce3d030107034200', 'hex');

/**
 * Builds the per-connection aTLS certificate (docs/protocol/atls.md): self-signed ECDSA P-256, CN=Constellation,
 * validity now ± 2 h, random positive 128-bit serial, and, when an issuer is given, one non-critical
 * extension under the issuer's variant OID whose value is the raw document over
 * (nonce = the peer's nonce, userData = sha256(SPKI DER)). Built straight from ASN.1 (no
 * @peculiar/x509 object model) because it sits on the handshake's critical path.
 */
export async function createAtlsCertificate(options: {
  nonce: Uint8Array;
  issuer?: Issuer;
  key?: AtlsKey;
  now?: Date;
  signal?: AbortSignal;
}): Promise<AtlsCertificate> {
  const key = options.key ?? generateAtlsKey();
  let extensions: Buffer | undefined;
  if (options.issuer) {
    let doc: Uint8Array;
    try {
      doc = await options.issuer.issue(key.userData, options.nonce, options.signal);
    } catch (err) {
      throw toAtlsError(err, 'ISSUER_FAILED', 'issuing attestation document');
    }
    // [3] { Extensions { Extension { extnID, extnValue } } }: critical=FALSE is DER-omitted.
    const ext = tlv(0x30, tlv(0x06, encodeOid(options.issuer.variant.oid)), tlv(0x04, Buffer.from(doc)));
    extensions = tlv(0xa3, tlv(0x30, ext));
  }
  const der = selfSigned(key, positiveSerial(randomBytes(16)), CONSTELLATION_NAME, (options.now ?? new Date()).getTime(), extensions);
  return { der, pem: toPem(der), key };
}

/**
 * The carrier of the server's nonce in mutual mode (docs/protocol/atls.md): a certificate whose Subject is
 * `CN=base64(nonce)` as a PrintableString. Only its Subject matters: TLS copies it into the
 * CertificateRequest's acceptable-CA list, where the reference client reads the nonce.
 */
export function createNonceCaCertificate(nonce: Uint8Array, key: AtlsKey, now = new Date()): string {
  const der = selfSigned(key, Buffer.from([0]), nameWithCn(Buffer.from(nonce).toString('base64')), now.getTime());
  return toPem(der);
}

/** PEM armour for a DER certificate. */
export function toPem(der: Uint8Array): string {
  return certificatePem(der);
}

/** DER content of a dotted OBJECT IDENTIFIER (one home: libs/crypto's DER writer). */
export { encodeOid };

// The certificate is emitted from a fixed DER layout: @peculiar/asn1-x509's generic serializer
// costs ~0.3 ms per TBSCertificate, the largest share of building a certificate on the handshake
// path. certificate.spec.ts parses the result with @peculiar/asn1-x509 and node:crypto.
function selfSigned(key: AtlsKey, serial: Buffer, name: Buffer, now: number, extensions?: Buffer): Buffer {
  const validity = tlv(0x30, derTime(now - ATLS_CERT_VALIDITY_SLACK_MS), derTime(now + ATLS_CERT_VALIDITY_SLACK_MS));
  const tbs = tlv(0x30, VERSION_3, tlv(0x02, serial), ECDSA_WITH_SHA256_DER, name, validity, name, key.spkiDer, ...(extensions ? [extensions] : []));
  // node:crypto emits the DER (r, s) ECDSA-Sig-Value X.509 expects.
  const signature = tlv(0x03, Buffer.from([0]), sign('sha256', tbs, key.privateKey));
  return tlv(0x30, tbs, ECDSA_WITH_SHA256_DER, signature);
}

// [0] EXPLICIT INTEGER 2 (v3).
const VERSION_3 = Buffer.from('a003020102', 'hex');
// AlgorithmIdentifier { ecdsa-with-SHA256 } (no parameters).
const ECDSA_WITH_SHA256_DER = Buffer.from('300a06082a8648ce3d040302', 'hex');

// Name with one CN, as PrintableString like Go (base64 and "Constellation" are printable characters).
function nameWithCn(cn: string): Buffer {
  if (!/^[A-Za-z0-9 '()+,./:=?-]+$/.test(cn)) throw new Error('CN is not a PrintableString');
  return tlv(0x30, tlv(0x31, tlv(0x30, tlv(0x06, encodeOid(COMMON_NAME)), tlv(0x13, Buffer.from(cn, 'latin1')))));
}
const CONSTELLATION_NAME = nameWithCn(ATLS_SUBJECT_CN);
