/**
 * AMD certificates of SEV-SNP evidence (docs/protocol/sev-snp.md §5): ARK, ASK/ASVK and the
 * V[CL]EK with its TCB, HWID and CSP extensions, parsed into validated objects. Cryptography
 * (chain and report signatures) is in chain.ts and signature.ts.
 */
import { X509Certificate, type KeyObject } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import { RsaSaPssParams } from '@peculiar/asn1-rsa';
import { Certificate } from '@peculiar/asn1-x509';
import { AttestationError } from '../errors.js';
import { readOctetString, readSmallInteger, readString } from './der.js';
import { amdNames, hwidLength, lineOfCommonName, type AmdProductLine } from './lines.js';
import type { TcbVersion } from './tcb.js';

/** RSASSA-PSS and SHA-384 OIDs; every AMD SEV certificate is signed with exactly this. */
export const OID_RSASSA_PSS = '1.2.840.113549.1.1.10';
export const OID_SHA384 = '2.16.840.1.101.3.4.2.2';

/** V[CL]EK extension OIDs. */
export const SNP_OID = {
  structVersion: '1.3.6.1.4.1.3704.1.1',
  productName: '1.3.6.1.4.1.3704.1.2',
  blSpl: '1.3.6.1.4.1.3704.1.3.1',
  teeSpl: '1.3.6.1.4.1.3704.1.3.2',
  snpSpl: '1.3.6.1.4.1.3704.1.3.3',
  ucodeSpl: '1.3.6.1.4.1.3704.1.3.8',
  /** Turin and later. */
  fmcSpl: '1.3.6.1.4.1.3704.1.3.9',
  hwid: '1.3.6.1.4.1.3704.1.4',
  cspId: '1.3.6.1.4.1.3704.1.5',
} as const;

/** Common names of the Milan certificates per role (other lines: amdNames in ./lines.ts). */
export const MILAN_NAMES = amdNames('Milan');

/** A parsed AMD certificate (any role). */
export interface AmdCertificate {
  readonly der: Buffer;
  readonly x509: X509Certificate;
  readonly subjectCn: string;
  readonly issuerCn: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly publicKey: KeyObject;
  /** Signature algorithm OID and, for RSASSA-PSS, the hash OID of its parameters. */
  readonly signature: { readonly oid: string; readonly pssHash: string | undefined };
  /** Extension values (extnValue contents) by OID. */
  readonly extensions: ReadonlyMap<string, Buffer>;
  /** SHA-256 fingerprint (hex), the identity used in caches and messages. */
  readonly fingerprint: string;
}

/** A VCEK or VLEK with the facts its extensions carry. */
export interface SignerCertificate extends AmdCertificate {
  readonly kind: 'vcek' | 'vlek';
  /** The product line whose ASK/ASVK issued it. */
  readonly productLine: AmdProductLine;
  readonly tcb: TcbVersion;
  readonly productName: string | undefined;
  /** VCEK: the hardware id it was issued for (64 bytes; Turin: the first 8 bytes of CHIP_ID). */
  readonly hwid: Buffer | undefined;
  /** VLEK: the cloud provider it was issued to. */
  readonly cspId: string | undefined;
}

const certInvalid = (what: string, message: string, details: Record<string, unknown> = {}) =>
  new AttestationError('CERT_INVALID', `${what}: ${message}`, { details: { certificate: what, ...details } });

function commonName(dn: string): string {
  return /(?:^|\n)CN=([^\n]*)/.exec(dn)?.[1]?.trim() ?? '';
}

function signatureAlgorithm(cert: Certificate): AmdCertificate['signature'] {
  const alg = cert.signatureAlgorithm;
  if (alg.algorithm !== OID_RSASSA_PSS || !alg.parameters) return { oid: alg.algorithm, pssHash: undefined };
  const params = AsnConvert.parse(alg.parameters, RsaSaPssParams);
  return { oid: alg.algorithm, pssHash: params.hashAlgorithm.algorithm };
}

/** Parses one DER certificate; malformed input is CERT_INVALID naming `what`. */
export function parseAmdCertificate(der: Uint8Array, what: string): AmdCertificate {
  const bytes = Buffer.from(der);
  let x509: X509Certificate;
  let asn: Certificate;
  let publicKey: KeyObject;
  try {
    x509 = new X509Certificate(bytes);
    asn = AsnConvert.parse(bytes, Certificate);
    // OpenSSL decodes the key lazily: an EC point off its curve only fails here.
    publicKey = x509.publicKey;
  } catch (err) {
    throw certInvalid(what, `malformed certificate: ${(err as Error).message}`);
  }
  const extensions = new Map<string, Buffer>();
  for (const ext of asn.tbsCertificate.extensions ?? []) extensions.set(ext.extnID, Buffer.from(ext.extnValue.buffer));
  let signature: AmdCertificate['signature'];
  try {
    signature = signatureAlgorithm(asn);
  } catch (err) {
    throw certInvalid(what, `malformed RSASSA-PSS parameters: ${(err as Error).message}`);
  }
  return {
    der: bytes,
    x509,
    subjectCn: commonName(x509.subject),
    issuerCn: commonName(x509.issuer),
    notBefore: new Date(x509.validFrom),
    notAfter: new Date(x509.validTo),
    publicKey,
    signature,
    extensions,
    fingerprint: x509.fingerprint256.replaceAll(':', '').toLowerCase(),
  };
}

/** The PEM CERTIFICATE blocks of a text, in order; anything else around them is an error. */
export function pemCertificates(text: string, what: string): Buffer[] {
  const blocks: Buffer[] = [];
  const re = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (text.slice(last, m.index).trim() !== '') throw certInvalid(what, 'unexpected data between PEM blocks');
    if (m[1] !== 'CERTIFICATE') throw certInvalid(what, `PEM block of type ${m[1]}, expected CERTIFICATE`);
    const body = m[2]!.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body)) throw certInvalid(what, 'PEM body is not base64');
    blocks.push(Buffer.from(body, 'base64'));
    last = re.lastIndex;
  }
  if (text.slice(last).trim() !== '') throw certInvalid(what, 'received more data than expected after the PEM blocks');
  return blocks;
}

/** DER or PEM (one certificate) -> DER. */
export function certificateBytes(data: Uint8Array | string, what: string): Buffer {
  const text = typeof data === 'string' ? data : Buffer.from(data).toString('latin1');
  if (text.includes('-----BEGIN')) {
    const blocks = pemCertificates(text, what);
    if (blocks.length !== 1) throw certInvalid(what, `expected one PEM certificate, got ${blocks.length}`);
    return blocks[0]!;
  }
  return Buffer.from(data);
}

function splExtension(cert: AmdCertificate, what: string, oid: string, name: string): number {
  const raw = cert.extensions.get(oid);
  if (!raw) throw certInvalid(what, `missing ${name} extension ${oid}`, { extension: oid });
  let v: number;
  try {
    v = readSmallInteger(raw);
  } catch (err) {
    throw certInvalid(what, `${name} extension: ${(err as Error).message}`, { extension: oid });
  }
  if (v > 255) throw certInvalid(what, `${name} ${v} does not fit a TCB byte`, { extension: oid, value: v });
  return v;
}

function optionalString(cert: AmdCertificate, what: string, oid: string, name: string): string | undefined {
  const raw = cert.extensions.get(oid);
  if (!raw) return undefined;
  try {
    return readString(raw);
  } catch (err) {
    throw certInvalid(what, `${name} extension: ${(err as Error).message}`, { extension: oid });
  }
}

/** The HWID extension: the line's HWID length in raw bytes (as AMD issues it) or an OCTET STRING holding them. */
function hwidExtension(cert: AmdCertificate, what: string, line: AmdProductLine): Buffer {
  const want = hwidLength(line);
  const raw = cert.extensions.get(SNP_OID.hwid);
  if (!raw) throw certInvalid(what, `missing HWID extension ${SNP_OID.hwid}`, { extension: SNP_OID.hwid });
  if (raw.length === want) return Buffer.from(raw);
  let inner: Buffer | undefined;
  try {
    inner = readOctetString(raw);
  } catch {
    inner = undefined;
  }
  if (inner?.length !== want) throw certInvalid(what, `HWID extension is ${raw.length} bytes, expected ${want} (${line})`, { extension: SNP_OID.hwid });
  return inner;
}

/** The TCB SPL extensions (Turin: with fmcSPL). */
function signerTcb(cert: AmdCertificate, what: string, line: AmdProductLine): TcbVersion {
  const tcb = {
    bootloader: splExtension(cert, what, SNP_OID.blSpl, 'blSPL'),
    tee: splExtension(cert, what, SNP_OID.teeSpl, 'teeSPL'),
    snp: splExtension(cert, what, SNP_OID.snpSpl, 'snpSPL'),
    microcode: splExtension(cert, what, SNP_OID.ucodeSpl, 'ucodeSPL'),
  };
  return line === 'Turin' ? { fmc: splExtension(cert, what, SNP_OID.fmcSpl, 'fmcSPL'), ...tcb } : tcb;
}

/** Subject and issuer common names of a V[CL]EK of `line`. */
function checkSignerNames(cert: AmdCertificate, what: string, kind: 'vcek' | 'vlek', line: AmdProductLine): void {
  const names = amdNames(line);
  const wantCn = names[kind];
  const wantIssuer = kind === 'vcek' ? names.ask : names.asvk;
  if (cert.subjectCn !== wantCn) throw certInvalid(what, `subject CN is ${JSON.stringify(cert.subjectCn)}, expected ${wantCn}`, { field: 'subject', expected: wantCn, actual: cert.subjectCn });
  if (cert.issuerCn !== wantIssuer) throw certInvalid(what, `issuer CN is ${JSON.stringify(cert.issuerCn)}, expected ${wantIssuer}`, { field: 'issuer', expected: wantIssuer, actual: cert.issuerCn });
}

/**
 * Parses a VCEK/VLEK (DER or one PEM block) of product line `line` and checks what its role
 * requires: subject CN SEV-VCEK/SEV-VLEK, issuer CN of the line's ASK/ASVK, an ECDSA P-384 key,
 * the TCB SPL extensions (Turin: with FMC), the HWID (VCEK; 8 bytes on Turin) or CSP id (VLEK),
 * and a product name (when present) of that line.
 */
export function parseSignerCertificate(data: Uint8Array | string, kind: 'vcek' | 'vlek', line: AmdProductLine = 'Milan'): SignerCertificate {
  const what = kind.toUpperCase();
  const cert = parseAmdCertificate(certificateBytes(data, what), what);
  checkSignerNames(cert, what, kind, line);
  const key = cert.publicKey;
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'secp384r1') {
    throw certInvalid(what, `public key is ${key.asymmetricKeyType} ${key.asymmetricKeyDetails?.namedCurve ?? ''}, expected ECDSA P-384`.trim(), { field: 'publicKey' });
  }
  const tcb = signerTcb(cert, what, line);
  const productName = optionalString(cert, what, SNP_OID.productName, 'productName');
  if (productName !== undefined && !productName.startsWith(line)) {
    throw new AttestationError('PRODUCT_UNSUPPORTED', `${what} was issued for product ${JSON.stringify(productName)}, not for the report's ${line}`, {
      details: { field: 'productName', expected: line, actual: productName },
    });
  }
  return {
    ...cert,
    kind,
    productLine: line,
    tcb,
    productName,
    hwid: kind === 'vcek' ? hwidExtension(cert, what, line) : undefined,
    cspId: kind === 'vlek' ? optionalString(cert, what, SNP_OID.cspId, 'cspId') : undefined,
  };
}

/** ARK/ASK/ASVK from KDS, configuration or the cache, classified by subject CN. */
export interface AmdChain {
  readonly ask: AmdCertificate | undefined;
  readonly ark: AmdCertificate | undefined;
}

/**
 * Parses a PEM chain (at most two certificates, each an ASK/ASVK or ARK of one supported line by
 * subject CN), as KDS serves `cert_chain` and issuers put into `CertChain`. No blocks is an empty
 * chain.
 */
export function parseAmdChain(pem: string, what = 'certificate chain'): AmdChain {
  const blocks = pemCertificates(pem.trim(), what);
  if (blocks.length > 2) throw certInvalid(what, `${blocks.length} certificates, expected at most 2 (ASK, ARK)`);
  let ask: AmdCertificate | undefined;
  let ark: AmdCertificate | undefined;
  for (const der of blocks) {
    const c = parseAmdCertificate(der, what);
    const line = lineOfCommonName(c.subjectCn);
    if (!line) throw certInvalid(what, `unexpected certificate ${JSON.stringify(c.subjectCn)} (expected the ASK, ASVK or ARK of Milan, Genoa or Turin)`);
    if (c.subjectCn === amdNames(line).ark) ark = c;
    else ask = c;
  }
  return { ask, ark };
}
