// The few X.509 fields aTLS verification needs, read with libs/crypto's strict DER reader. The
// generic @peculiar/asn1-schema parser costs ~0.2 ms per certificate, a third of a client's whole
// verification; this walks the same structure in a few microseconds. Tests cross-check it against
// @peculiar/asn1-x509 and node:crypto.

import { DER_TAG as TAG, DerReader, decodeOid, decodeTime, type DerElement } from '@asterism/crypto';
import { AtlsError } from './errors.js';

/** A structural problem of a peer's certificate (the DER reader's own errors are CryptoError DER_MALFORMED). */
const malformed = (message: string) => new AtlsError('CERT_MALFORMED', message);

export { DerReader, TAG, decodeOid, decodeTime, type DerElement };

/** The parts of an X.509 certificate aTLS verification uses. */
export interface CertificateFields {
  readonly tbsRaw: Buffer;
  readonly signatureAlgorithm: string;
  /** BIT STRING payload (unused-bits byte stripped; must be 0). */
  readonly signature: Buffer;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** Full SubjectPublicKeyInfo encoding. */
  readonly spkiRaw: Buffer;
  readonly extensions: ReadonlyArray<{ oid: string; critical: boolean; value: Buffer }>;
}

/** Parses a DER X.509 certificate (v1-v3) into the fields aTLS needs. */
export function parseCertificateFields(der: Buffer): CertificateFields {
  const top = new DerReader(der);
  const cert = new DerReader(top.next(TAG.SEQUENCE).content);
  top.end('certificate');
  const tbsEl = cert.next(TAG.SEQUENCE);
  const outerAlg = cert.next(TAG.SEQUENCE);
  const sigBits = cert.next(TAG.BIT_STRING).content;
  cert.end('signatureValue');
  if (sigBits.length < 1 || sigBits[0] !== 0) throw malformed('signature BIT STRING has unused bits');

  const tbs = new DerReader(tbsEl.content);
  const version = tbs.optional(0xa0);
  if (version) {
    const v = new DerReader(version.content).next(TAG.INTEGER).content;
    if (v.length !== 1 || v[0]! > 2) throw malformed('unsupported certificate version');
  }
  tbs.next(TAG.INTEGER); // serial
  const innerAlg = tbs.next(TAG.SEQUENCE);
  if (!innerAlg.raw.equals(outerAlg.raw)) throw malformed("inner and outer signature algorithm identifiers don't match");
  tbs.next(TAG.SEQUENCE); // issuer
  const validity = new DerReader(tbs.next(TAG.SEQUENCE).content);
  const notBefore = decodeTime(validity.next());
  const notAfter = decodeTime(validity.next());
  validity.end('validity');
  tbs.next(TAG.SEQUENCE); // subject
  const spki = tbs.next(TAG.SEQUENCE);
  tbs.optional(0x81); // issuerUniqueID
  tbs.optional(0x82); // subjectUniqueID
  const extensions: Array<{ oid: string; critical: boolean; value: Buffer }> = [];
  const extsEl = tbs.optional(0xa3);
  tbs.end('TBSCertificate');
  if (extsEl) {
    const outer = new DerReader(extsEl.content);
    const list = new DerReader(outer.next(TAG.SEQUENCE).content);
    outer.end('extensions');
    while (!list.done) extensions.push(extensionFields(list.next(TAG.SEQUENCE).content));
  }
  return {
    tbsRaw: tbsEl.raw,
    signatureAlgorithm: decodeOid(new DerReader(outerAlg.content).next(TAG.OID).content),
    signature: sigBits.subarray(1),
    notBefore,
    notAfter,
    spkiRaw: spki.raw,
    extensions,
  };
}

/** The contents of `Extension ::= SEQUENCE { extnID OID, critical BOOLEAN DEFAULT FALSE, extnValue OCTET STRING }`. */
function extensionFields(content: Buffer): { oid: string; critical: boolean; value: Buffer } {
  const ext = new DerReader(content);
  const oid = decodeOid(ext.next(TAG.OID).content);
  const crit = ext.optional(TAG.BOOLEAN);
  if (crit && (crit.content.length !== 1 || (crit.content[0] !== 0 && crit.content[0] !== 0xff))) throw malformed('invalid critical flag');
  const value = ext.next(TAG.OCTET_STRING).content;
  ext.end('extension');
  return { oid, critical: crit?.content[0] === 0xff, value };
}

/** One DER `Extension` on its own (exporter-bound client evidence, docs/adr/0004); nothing may follow it. */
export function parseExtension(der: Buffer): { oid: string; critical: boolean; value: Buffer } {
  const top = new DerReader(der);
  const ext = extensionFields(top.next(TAG.SEQUENCE).content);
  top.end('extension');
  return ext;
}

/** ExtKeyUsageSyntax ::= SEQUENCE OF OBJECT IDENTIFIER. */
export function parseOidSequence(der: Buffer): string[] {
  const top = new DerReader(der);
  const seq = new DerReader(top.next(TAG.SEQUENCE).content);
  top.end('SEQUENCE OF OID');
  const out: string[] = [];
  while (!seq.done) out.push(decodeOid(seq.next(TAG.OID).content));
  return out;
}
