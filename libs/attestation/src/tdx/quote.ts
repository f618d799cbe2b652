/**
 * Parser of Intel TDX DCAP quotes, versions 4 and 5 (byte layout: docs/protocol/tdx-dcap.md).
 * Produces a validated domain object; every length is checked before it is used, and every
 * failure is an AttestationError `QUOTE_INVALID` naming the field and offset.
 */
import { AttestationError } from '../errors.js';
import { ByteReader } from './byte-reader.js';

/** Header length of quotes v4 and v5. */
export const QUOTE_HEADER_LENGTH = 48;
/** TD report body length of a TDX 1.0 quote (v4, or v5 body type 2). */
export const TD10_BODY_LENGTH = 584;
/** TD report body length of a TDX 1.5 body (v5 body type 3): TD10 + TEE_TCB_SVN_2 + MRSERVICETD. */
export const TD15_BODY_LENGTH = 648;
/** SGX enclave report (the QE report) length. */
export const QE_REPORT_LENGTH = 384;
/** ECDSA-256-with-P-256 attestation key type. */
export const ATTESTATION_KEY_ECDSA_P256 = 2;
/** TEE type of TDX. */
export const TEE_TYPE_TDX = 0x81;
/** Certification data types we understand: 5 = PCK chain PEM, 6 = QE report certification data. */
export const CERT_DATA_PCK_CHAIN = 5;
export const CERT_DATA_QE_REPORT = 6;

/** Quote header. */
export interface QuoteHeader {
  version: number;
  attestationKeyType: number;
  teeType: number;
  qeSvn: number;
  pceSvn: number;
  /** 16 bytes. */
  qeVendorId: Buffer;
  /** 20 bytes. */
  userData: Buffer;
}

/** The TD's report body: what the TD measured, as signed by the attestation key. */
export interface TdReportBody {
  /** 16 bytes: TDX module and TCB SVNs. */
  teeTcbSvn: Buffer;
  mrSeam: Buffer;
  mrSignerSeam: Buffer;
  seamAttributes: Buffer;
  tdAttributes: Buffer;
  xfam: Buffer;
  mrTd: Buffer;
  mrConfigId: Buffer;
  mrOwner: Buffer;
  mrOwnerConfig: Buffer;
  /** RTMR0..RTMR3, 48 bytes each. */
  rtmrs: readonly [Buffer, Buffer, Buffer, Buffer];
  /** 64 bytes chosen by the TD (the nonce binding). */
  reportData: Buffer;
  /** TDX 1.5 bodies only. */
  teeTcbSvn2?: Buffer;
  mrServiceTd?: Buffer;
}

/** The quoting enclave's SGX report, signed by the PCK key. */
export interface QeReport {
  /** The 384 signed bytes. */
  raw: Buffer;
  cpuSvn: Buffer;
  miscSelect: number;
  /** 16 bytes. */
  attributes: Buffer;
  mrEnclave: Buffer;
  mrSigner: Buffer;
  isvProdId: number;
  isvSvn: number;
  /** 64 bytes: SHA-256(attestation key || QE auth data) then 32 zero bytes. */
  reportData: Buffer;
}

/** A parsed TDX quote. */
export interface TdxQuote {
  header: QuoteHeader;
  /** 2 = TDX 1.0 body, 3 = TDX 1.5 body (v4 quotes are always 2). */
  bodyType: number;
  body: TdReportBody;
  /** The bytes the attestation key signed (header and body, for v5 with the body descriptor). */
  signedBytes: Buffer;
  /** ECDSA P-256 signature r||s (64 bytes). */
  signature: Buffer;
  /** Raw P-256 public key x||y (64 bytes). */
  attestationKey: Buffer;
  qeReport: QeReport;
  /** r||s signature of the QE report by the PCK key. */
  qeReportSignature: Buffer;
  qeAuthData: Buffer;
  /** PEM certificates PCK, intermediate CA, root (as carried in the quote). */
  pckChainPem: string;
  /** Bytes after the signature data (buffer padding; covered by no signature, never used). */
  trailingLength: number;
}

/** Parses a TDX quote v4 or v5. */
export function parseTdxQuote(bytes: Uint8Array): TdxQuote {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const r = new ByteReader(buf, 'TDX quote');
  const header = parseHeader(r);
  const { bodyType, body } = parseBodySection(r, header.version);
  const signedBytes = buf.subarray(0, r.offset);
  const sigLen = r.u32('signature data length');
  const sig = new ByteReader(r.bytes(sigLen, 'signature data'), 'TDX quote signature data');
  const signature = Buffer.from(sig.bytes(64, 'quote signature'));
  const attestationKey = Buffer.from(sig.bytes(64, 'attestation key'));
  const outer = readCertData(sig, 'certification data');
  if (outer.type !== CERT_DATA_QE_REPORT) {
    invalid(`certification data type ${outer.type} is not ${CERT_DATA_QE_REPORT} (QE report certification data)`, 'certification data type', { type: outer.type });
  }
  const qe = new ByteReader(outer.data, 'QE report certification data');
  const qeReport = parseQeReport(qe.bytes(QE_REPORT_LENGTH, 'QE report'));
  const qeReportSignature = Buffer.from(qe.bytes(64, 'QE report signature'));
  const qeAuthData = Buffer.from(qe.bytes(qe.u16('QE auth data size'), 'QE auth data'));
  const inner = readCertData(qe, 'PCK certification data');
  // The length fields are covered by no signature: they must describe the data exactly.
  requireConsumed(qe, 'QE report certification data');
  requireConsumed(sig, 'signature data');
  if (inner.type !== CERT_DATA_PCK_CHAIN) {
    invalid(`PCK certification data type ${inner.type} is not ${CERT_DATA_PCK_CHAIN} (PCK certificate chain)`, 'PCK certification data type', { type: inner.type });
  }
  return {
    header,
    bodyType,
    body,
    signedBytes: Buffer.from(signedBytes),
    signature,
    attestationKey,
    qeReport,
    qeReportSignature,
    qeAuthData,
    pckChainPem: inner.data.toString('latin1').replace(/\0+$/, ''),
    trailingLength: r.remaining,
  };
}

function parseHeader(r: ByteReader): QuoteHeader {
  const version = r.u16('version');
  if (version !== 4 && version !== 5) invalid(`version ${version} is not 4 or 5`, 'version', { version });
  const attestationKeyType = r.u16('attestation key type');
  if (attestationKeyType !== ATTESTATION_KEY_ECDSA_P256) {
    invalid(`attestation key type ${attestationKeyType} is not ECDSA-P256 (${ATTESTATION_KEY_ECDSA_P256})`, 'attestation key type', { attestationKeyType });
  }
  const teeType = r.u32('TEE type');
  if (teeType !== TEE_TYPE_TDX) invalid(`TEE type 0x${teeType.toString(16)} is not TDX (0x81)`, 'TEE type', { teeType });
  return {
    version,
    attestationKeyType,
    teeType,
    qeSvn: r.u16('QE SVN'),
    pceSvn: r.u16('PCE SVN'),
    qeVendorId: Buffer.from(r.bytes(16, 'QE vendor ID')),
    userData: Buffer.from(r.bytes(20, 'user data')),
  };
}

function parseBodySection(r: ByteReader, version: number): { bodyType: number; body: TdReportBody } {
  if (version === 4) return { bodyType: 2, body: parseBody(r, false) };
  const bodyType = r.u16('body type');
  const size = r.u32('body size');
  const expected = bodyType === 2 ? TD10_BODY_LENGTH : bodyType === 3 ? TD15_BODY_LENGTH : undefined;
  if (expected === undefined) invalid(`body type ${bodyType} is not a TD report (2 or 3)`, 'body type', { bodyType });
  if (size !== expected) invalid(`body size ${size} does not match body type ${bodyType} (${expected})`, 'body size', { size, expected });
  return { bodyType, body: parseBody(r, bodyType === 3) };
}

function parseBody(r: ByteReader, td15: boolean): TdReportBody {
  const b = (n: number, field: string) => Buffer.from(r.bytes(n, field));
  const body: TdReportBody = {
    teeTcbSvn: b(16, 'TEE TCB SVN'),
    mrSeam: b(48, 'MRSEAM'),
    mrSignerSeam: b(48, 'MRSIGNERSEAM'),
    seamAttributes: b(8, 'SEAM attributes'),
    tdAttributes: b(8, 'TD attributes'),
    xfam: b(8, 'XFAM'),
    mrTd: b(48, 'MRTD'),
    mrConfigId: b(48, 'MRCONFIGID'),
    mrOwner: b(48, 'MROWNER'),
    mrOwnerConfig: b(48, 'MROWNERCONFIG'),
    rtmrs: [b(48, 'RTMR0'), b(48, 'RTMR1'), b(48, 'RTMR2'), b(48, 'RTMR3')],
    reportData: b(64, 'REPORT_DATA'),
  };
  if (td15) {
    body.teeTcbSvn2 = b(16, 'TEE TCB SVN 2');
    body.mrServiceTd = b(48, 'MRSERVICETD');
  }
  return body;
}

/** Parses the 384-byte SGX report of the quoting enclave. */
export function parseQeReport(raw: Buffer): QeReport {
  if (raw.length !== QE_REPORT_LENGTH) invalid(`QE report is ${raw.length} bytes, not ${QE_REPORT_LENGTH}`, 'QE report', { length: raw.length });
  const copy = Buffer.from(raw);
  return {
    raw: copy,
    cpuSvn: copy.subarray(0, 16),
    miscSelect: copy.readUInt32LE(16),
    attributes: copy.subarray(48, 64),
    mrEnclave: copy.subarray(64, 96),
    mrSigner: copy.subarray(128, 160),
    isvProdId: copy.readUInt16LE(256),
    isvSvn: copy.readUInt16LE(258),
    reportData: copy.subarray(320, 384),
  };
}

function readCertData(r: ByteReader, what: string): { type: number; data: Buffer } {
  const type = r.u16(`${what} type`);
  const size = r.u32(`${what} size`);
  return { type, data: r.bytes(size, what) };
}

function requireConsumed(r: ByteReader, what: string): void {
  if (r.remaining !== 0) invalid(`${r.remaining} unexplained bytes at the end of the ${what}`, what, { extra: r.remaining });
}

function invalid(message: string, field: string, details: Record<string, unknown>): never {
  throw new AttestationError('QUOTE_INVALID', `TDX quote: ${message}`, { details: { field, ...details } });
}
