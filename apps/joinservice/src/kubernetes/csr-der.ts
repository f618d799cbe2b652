import { DER_TAG, DerReader, decodeOid, type DerElement } from '@asterism/crypto';

/** The parts of a PKCS#10 request (RFC 2986) the kubelet CA checks and copies. */
export interface CsrFields {
  /** CertificationRequestInfo exactly as received: what the signature covers. */
  infoRaw: Buffer;
  /** Subject Name exactly as received (copied into the certificate). */
  subjectRaw: Buffer;
  /** SubjectPublicKeyInfo exactly as received. */
  spkiRaw: Buffer;
  /** Subject attributes in order: attribute type OID and decoded string value. */
  subject: Array<{ oid: string; value: string }>;
  signatureAlgorithm: string;
  /** BIT STRING payload (no unused bits). */
  signature: Buffer;
  /** iPAddress entries of a subjectAltName in the extensionRequest attribute, in text form. */
  ips: string[];
}

const OID_EXTENSION_REQUEST = '1.2.840.113549.1.9.14';
const OID_SUBJECT_ALT_NAME = '2.5.29.17';
const IP_ADDRESS = 0x87; // GeneralName [7] IMPLICIT OCTET STRING
const TAG_ATTRIBUTES = 0xa0; // [0] IMPLICIT SET OF Attribute
const TAG_SET = 0x31;

/** Directory string types a Name may use, decoded to text. */
function decodeDirectoryString(el: DerElement): string {
  switch (el.tag) {
    case 0x0c: // UTF8String
      return el.content.toString('utf8');
    case 0x13: // PrintableString
    case 0x16: // IA5String
    case 0x14: // TeletexString (treated as Latin-1)
      return el.content.toString('latin1');
    case 0x1e: // BMPString (UTF-16BE)
      return Buffer.from(el.content).swap16().toString('utf16le');
    default:
      throw new Error(`unsupported string type 0x${el.tag.toString(16)} in the subject`);
  }
}

function parseName(name: DerElement): Array<{ oid: string; value: string }> {
  const out: Array<{ oid: string; value: string }> = [];
  const rdns = new DerReader(name.content);
  while (!rdns.done) {
    const rdn = new DerReader(rdns.next(TAG_SET).content);
    while (!rdn.done) {
      const atv = new DerReader(rdn.next(DER_TAG.SEQUENCE).content);
      const oid = decodeOid(atv.next(DER_TAG.OID).content);
      out.push({ oid, value: decodeDirectoryString(atv.next()) });
      atv.end('AttributeTypeAndValue');
    }
  }
  return out;
}

function ipText(bytes: Buffer): string {
  if (bytes.length === 4) return [...bytes].join('.');
  if (bytes.length === 16) return Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16)).join(':');
  throw new Error(`iPAddress of ${bytes.length} bytes`);
}

/** IPs of the subjectAltName in an extensionRequest value (Extensions). */
function sanIps(extensions: DerElement): string[] {
  const ips: string[] = [];
  const exts = new DerReader(extensions.content);
  while (!exts.done) {
    const ext = new DerReader(exts.next(DER_TAG.SEQUENCE).content);
    const oid = decodeOid(ext.next(DER_TAG.OID).content);
    ext.optional(DER_TAG.BOOLEAN);
    const value = ext.next(DER_TAG.OCTET_STRING);
    ext.end('Extension');
    if (oid !== OID_SUBJECT_ALT_NAME) continue;
    const names = new DerReader(new DerReader(value.content).next(DER_TAG.SEQUENCE).content);
    while (!names.done) {
      const gn = names.next();
      if (gn.tag === IP_ADDRESS) ips.push(ipText(gn.content));
    }
  }
  return ips;
}

function parseAttributes(attributes: DerElement | undefined): string[] {
  const ips: string[] = [];
  const attrs = new DerReader(attributes?.content ?? Buffer.alloc(0));
  while (!attrs.done) {
    const attr = new DerReader(attrs.next(DER_TAG.SEQUENCE).content);
    const oid = decodeOid(attr.next(DER_TAG.OID).content);
    const values = new DerReader(attr.next(TAG_SET).content);
    attr.end('Attribute');
    if (oid !== OID_EXTENSION_REQUEST) continue;
    while (!values.done) ips.push(...sanIps(values.next(DER_TAG.SEQUENCE)));
  }
  return ips;
}

/** Reads a DER CertificationRequest strictly (throws on any structural error). */
export function parseCsrDer(der: Buffer): CsrFields {
  const outer = new DerReader(der);
  const csr = new DerReader(outer.next(DER_TAG.SEQUENCE).content);
  outer.end('CertificationRequest');
  const infoEl = csr.next(DER_TAG.SEQUENCE);
  const algorithm = new DerReader(csr.next(DER_TAG.SEQUENCE).content);
  const signatureEl = csr.next(DER_TAG.BIT_STRING);
  csr.end('CertificationRequest');
  if (signatureEl.content[0] !== 0) throw new Error('signature BIT STRING has unused bits');
  const info = new DerReader(infoEl.content);
  const version = info.next(DER_TAG.INTEGER);
  if (version.content.length !== 1 || version.content[0] !== 0) throw new Error('unsupported CSR version');
  const subjectEl = info.next(DER_TAG.SEQUENCE);
  const spkiEl = info.next(DER_TAG.SEQUENCE);
  const attributes = info.optional(TAG_ATTRIBUTES);
  info.end('CertificationRequestInfo');
  return {
    infoRaw: infoEl.raw,
    subjectRaw: subjectEl.raw,
    spkiRaw: spkiEl.raw,
    subject: parseName(subjectEl),
    signatureAlgorithm: decodeOid(algorithm.next(DER_TAG.OID).content),
    signature: signatureEl.content.subarray(1),
    ips: parseAttributes(attributes),
  };
}
