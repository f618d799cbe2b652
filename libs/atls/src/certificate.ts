import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier,
  AttributeTypeAndValue,
  AttributeValue,
  Certificate,
  Extension,
  Extensions,
  Name,
  RelativeDistinguishedName,
  SubjectPublicKeyInfo,
  TBSCertificate,
  Validity,
  Version,
} from '@peculiar/asn1-x509';
import type { Issuer } from '@asterism/attestation';
import { randomBytes } from '@asterism/crypto';
import { toAtlsError } from './errors.js';

/** ecdsa-with-SHA256 (RFC 5758); parameters absent. */
export const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';
const COMMON_NAME = '2.5.4.3';
/** Subject and issuer CN of every aTLS certificate, as in the reference. */
export const ATLS_SUBJECT_CN = 'Constellation';
/** NotBefore = now - 2 h, NotAfter = now + 2 h (SPEC.md §4.5). */
export const ATLS_CERT_VALIDITY_SLACK_MS = 2 * 60 * 60 * 1000;

/** A fresh ECDSA P-256 key with the SPKI DER and its SHA-256 (the aTLS user data). */
export interface AtlsKey {
  readonly privateKey: KeyObject;
  /** PKCS#8 PEM, what `tls.createSecureContext` wants. */
  readonly privateKeyPem: string;
  readonly spkiDer: Buffer;
  /** sha256(SPKI DER): the user data the attestation document binds (SPEC.md §4.5 step 1). */
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
  const spkiDer = publicKey.export({ type: 'spki', format: 'der' });
  return {
    privateKey,
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    spkiDer,
    userData: createHash('sha256').update(spkiDer).digest(),
  };
}

/**
 * Builds the per-connection aTLS certificate (SPEC.md §4.5): self-signed ECDSA P-256, CN=Constellation,
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
  let extensions: Extensions | undefined;
  if (options.issuer) {
    let doc: Uint8Array;
    try {
      doc = await options.issuer.issue(key.userData, options.nonce, options.signal);
    } catch (err) {
      throw toAtlsError(err, 'ISSUER_FAILED', 'issuing attestation document');
    }
    extensions = new Extensions([new Extension({ extnID: options.issuer.variant.oid, critical: false, extnValue: new OctetString(doc) })]);
  }
  const now = (options.now ?? new Date()).getTime();
  const name = nameWithCn(ATLS_SUBJECT_CN);
  const der = signTbs(
    new TBSCertificate({
      version: Version.v3,
      serialNumber: positiveSerial(randomBytes(16)),
      signature: new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }),
      issuer: name,
      validity: new Validity({ notBefore: wholeSeconds(now - ATLS_CERT_VALIDITY_SLACK_MS), notAfter: wholeSeconds(now + ATLS_CERT_VALIDITY_SLACK_MS) }),
      subject: name,
      subjectPublicKeyInfo: AsnConvert.parse(key.spkiDer, SubjectPublicKeyInfo),
      extensions,
    }),
    key.privateKey,
  );
  return { der, pem: toPem(der), key };
}

/**
 * The carrier of the server's nonce in mutual mode (SPEC.md §4.3): a certificate whose Subject is
 * `CN=base64(nonce)` as a PrintableString. Only its Subject matters: TLS copies it into the
 * CertificateRequest's acceptable-CA list, where the reference client reads the nonce.
 */
export function createNonceCaCertificate(nonce: Uint8Array, key: AtlsKey, now = new Date()): string {
  const name = nameWithCn(Buffer.from(nonce).toString('base64'));
  const t = now.getTime();
  const der = signTbs(
    new TBSCertificate({
      version: Version.v3,
      serialNumber: new Uint8Array([0]).buffer,
      signature: new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }),
      issuer: name,
      validity: new Validity({ notBefore: wholeSeconds(t - ATLS_CERT_VALIDITY_SLACK_MS), notAfter: wholeSeconds(t + ATLS_CERT_VALIDITY_SLACK_MS) }),
      subject: name,
      subjectPublicKeyInfo: AsnConvert.parse(key.spkiDer, SubjectPublicKeyInfo),
    }),
    key.privateKey,
  );
  return toPem(der);
}

/** PEM armour for a DER certificate. */
export function toPem(der: Uint8Array): string {
  const b64 = Buffer.from(der).toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 64) lines.push(b64.slice(i, i + 64));
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

function signTbs(tbs: TBSCertificate, key: KeyObject): Buffer {
  const tbsDer = Buffer.from(AsnConvert.serialize(tbs));
  // node:crypto emits the DER (r, s) ECDSA-Sig-Value X.509 expects.
  const signature = sign('sha256', tbsDer, key);
  const cert = new Certificate({ tbsCertificate: tbs, signatureAlgorithm: tbs.signature, signatureValue: new Uint8Array(signature).buffer });
  return Buffer.from(AsnConvert.serialize(cert));
}

// Go encodes these CNs as PrintableString; base64 and "Constellation" are printable characters.
function nameWithCn(cn: string): Name {
  return new Name([new RelativeDistinguishedName([new AttributeTypeAndValue({ type: COMMON_NAME, value: new AttributeValue({ printableString: cn }) })])]);
}

// DER INTEGER content of a positive serial: no redundant leading zeros, 0x00 prefix if the top bit is set.
function positiveSerial(bytes: Buffer): ArrayBuffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0 && bytes[i + 1]! < 0x80) i++;
  const trimmed = bytes.subarray(i);
  const out = trimmed[0]! >= 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : Buffer.from(trimmed);
  return new Uint8Array(out).buffer;
}

function wholeSeconds(ms: number): Date {
  return new Date(Math.floor(ms / 1000) * 1000);
}
