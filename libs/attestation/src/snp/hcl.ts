/**
 * Azure's HCL report and runtime data (docs/protocol/sev-snp.md §7-§8). The HCL report from TPM
 * NV is split into the SNP report and the runtime data; the runtime data's first key must be the
 * TPM attestation key (modulus; exponent little-endian, TPM 0 meaning 65537).
 */
import { TPM_ALG, type TpmtPublic } from '@asterism/tpm';
import { AttestationError } from '../errors.js';
import { parseGoJsonObject } from '../go-json.js';
import { REPORT_SIZE } from './report.js';

/** NV index of the HCL report and handle of the HCL attestation key. */
export const AZURE_HCL_REPORT_NV_INDEX = 0x01400001;
export const AZURE_AK_HANDLE = 0x81000003;

const HCL_HEADER = 0x20;
const IGVM_HEADER = 0x14;
/** IGVM report types. */
const REPORT_TYPE_SNP = 2;

/** The two pieces of an HCL report the SNP variant uses. */
export interface HclReport {
  readonly report: Buffer;
  readonly runtimeData: Buffer;
}

const hclInvalid = (why: string, details: Record<string, unknown> = {}) => new AttestationError('ISSUER_FAILED', `HCL report: ${why}`, { details: { step: 'parsing HCL report', ...details } });

/**
 * Splits the HCL report: 32-byte header, SNP report, 20-byte IGVM request header (report type
 * must be SNP; runtime data size bounded by the data present), runtime data (cut at its first NUL:
 * the HCL pads it, and the padding is not part of what REPORT_DATA binds).
 */
export function parseHclReport(nv: Uint8Array): HclReport {
  const b = Buffer.from(nv);
  const igvm = HCL_HEADER + REPORT_SIZE;
  if (b.length < igvm + IGVM_HEADER) throw hclInvalid(`${b.length} bytes is too short (at least ${igvm + IGVM_HEADER})`, { size: b.length });
  const type = b.readUInt32LE(igvm + 8);
  if (type !== REPORT_TYPE_SNP) throw hclInvalid(`report type ${type} is not SEV-SNP (2)`, { reportType: type });
  const size = b.readUInt32LE(igvm + 16);
  const start = igvm + IGVM_HEADER;
  if (size === 0 || start + size > b.length) throw hclInvalid(`runtime data size ${size} exceeds the ${b.length - start} bytes present`, { runtimeDataSize: size });
  const data = b.subarray(start, start + size);
  const nul = data.indexOf(0);
  return { report: Buffer.from(b.subarray(HCL_HEADER, igvm)), runtimeData: Buffer.from(nul >= 0 ? data.subarray(0, nul) : data) };
}

/** Builds an HCL report around an SNP report and runtime data (tests; the layout Azure writes to NV). */
export function encodeHclReport(report: Uint8Array, runtimeData: Uint8Array, padTo = 0): Buffer {
  const header = Buffer.alloc(HCL_HEADER);
  header.write('HCLA', 0, 'latin1');
  header.writeUInt32LE(2, 4);
  header.writeUInt32LE(HCL_HEADER + REPORT_SIZE + IGVM_HEADER + runtimeData.length, 8);
  header.writeUInt32LE(REPORT_TYPE_SNP, 12);
  const igvm = Buffer.alloc(IGVM_HEADER);
  igvm.writeUInt32LE(IGVM_HEADER + runtimeData.length, 0);
  igvm.writeUInt32LE(1, 4);
  igvm.writeUInt32LE(REPORT_TYPE_SNP, 8);
  igvm.writeUInt32LE(1, 12);
  igvm.writeUInt32LE(runtimeData.length, 16);
  const out = Buffer.concat([header, Buffer.from(report), igvm, Buffer.from(runtimeData)]);
  return padTo > out.length ? Buffer.concat([out, Buffer.alloc(padTo - out.length)]) : out;
}

const b64url = (s: string) => {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(s)) throw new Error('not base64url');
  return Buffer.from(s, 'base64url');
};

/**
 * AK_MISMATCH unless `keys[0]` of the runtime data JSON is the RSA attestation key: `n` equals the
 * modulus and `e` (little-endian, at most 4 bytes) equals the exponent, where TPM 0 means 65537.
 */
export function checkHclAttestationKey(runtimeData: Uint8Array, ak: TpmtPublic): void {
  let key: Record<string, unknown>;
  try {
    const obj = parseGoJsonObject(runtimeData, 'HCL runtime data');
    const keys = obj['keys'];
    if (!Array.isArray(keys) || keys.length === 0 || typeof keys[0] !== 'object' || keys[0] === null) throw new Error('no keys');
    key = keys[0] as Record<string, unknown>;
  } catch (err) {
    throw new AttestationError('DOCUMENT_MALFORMED', `validating HCLAkPub: ${(err as Error).message}`, { details: { field: 'RuntimeData' }, cause: err });
  }
  if (ak.type !== TPM_ALG.RSA) throw new AttestationError('AK_MISMATCH', 'validating HCLAkPub: the attestation key is not an RSA key', { details: { field: 'ak_pub' } });
  let n: Buffer;
  let e: Buffer;
  try {
    n = b64url(String(key['n'] ?? ''));
    e = b64url(String(key['e'] ?? ''));
  } catch (err) {
    throw new AttestationError('DOCUMENT_MALFORMED', `validating HCLAkPub: key encoding: ${(err as Error).message}`, { details: { field: 'RuntimeData.keys[0]' } });
  }
  if (!n.equals(ak.modulus)) {
    throw new AttestationError('AK_MISMATCH', 'validating HCLAkPub: the runtime data key modulus is not the attestation key', { details: { field: 'RuntimeData.keys[0].n' } });
  }
  if (e.length === 0 || e.length > 4) throw new AttestationError('AK_MISMATCH', `validating HCLAkPub: exponent of ${e.length} bytes`, { details: { field: 'RuntimeData.keys[0].e' } });
  const padded = Buffer.alloc(4);
  e.copy(padded);
  const exponent = padded.readUInt32LE(0);
  const akExponent = ak.rsa.exponent === 0 ? 65537 : ak.rsa.exponent;
  if (exponent !== akExponent) {
    throw new AttestationError('AK_MISMATCH', `validating HCLAkPub: exponent ${exponent} is not the attestation key's ${akExponent}`, {
      details: { field: 'RuntimeData.keys[0].e', expected: akExponent, actual: exponent },
    });
  }
}
