/**
 * The Azure HCL report (TPM NV index 0x01400001) of a TDX confidential VM
 * (docs/protocol/azure-hcl-report.md): a 32-byte header, the hardware report, and at offset
 * 1216 the IGVM request header that describes the runtime data (the HCL attestation key JSON)
 * which follows at 1236. Parsed with every length checked; failures are `REPORT_INVALID`.
 */
import { AttestationError } from '../errors.js';

/** NV index holding the HCL report on Azure confidential VMs. */
export const HCL_REPORT_NV_INDEX = 0x01400001;
/** Offset of the hardware report. */
export const HCL_HW_REPORT_OFFSET = 32;
/** Length of a TDX TD report (TDREPORT_STRUCT). */
export const TD_REPORT_LENGTH = 1024;
/** Offset of the IGVM request header. */
export const HCL_IGVM_HEADER_OFFSET = 1216;
/** Offset of the runtime data. */
export const HCL_RUNTIME_DATA_OFFSET = 1236;

/** HCL report types (IGVM request header, offset 1216 + 8). */
export const HCL_REPORT_TYPES = { invalid: 0, reserved: 1, snp: 2, tvm: 3, tdx: 4 } as const;

/** A TDX HCL report: the TD report to quote and the runtime data its REPORT_DATA binds. */
export interface TdxHclReport {
  /** TDREPORT_STRUCT, 1024 bytes. */
  tdReport: Buffer;
  /** Runtime data JSON bytes (`{"keys":[…HCLAkPub…],…}`). */
  runtimeData: Buffer;
}

/** Parses an HCL report that must carry a TDX TD report (type 4). */
export function parseTdxHclReport(bytes: Uint8Array): TdxHclReport {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < HCL_RUNTIME_DATA_OFFSET) {
    invalid(`is ${buf.length} bytes, shorter than its ${HCL_RUNTIME_DATA_OFFSET}-byte fixed part`, 'length', { length: buf.length, minimum: HCL_RUNTIME_DATA_OFFSET });
  }
  const reportType = buf.readUInt32LE(HCL_IGVM_HEADER_OFFSET + 8);
  if (reportType !== HCL_REPORT_TYPES.tdx) invalid(`report type ${reportType} is not TDX (${HCL_REPORT_TYPES.tdx})`, 'report type', { reportType });
  const runtimeSize = buf.readUInt32LE(HCL_IGVM_HEADER_OFFSET + 16);
  const end = HCL_RUNTIME_DATA_OFFSET + runtimeSize;
  if (end > buf.length) {
    invalid(`runtime data size ${runtimeSize} runs past the end (${buf.length} bytes)`, 'runtime data size', { runtimeSize, length: buf.length });
  }
  return {
    tdReport: Buffer.from(buf.subarray(HCL_HW_REPORT_OFFSET, HCL_HW_REPORT_OFFSET + TD_REPORT_LENGTH)),
    runtimeData: Buffer.from(buf.subarray(HCL_RUNTIME_DATA_OFFSET, end)),
  };
}

function invalid(message: string, field: string, details: Record<string, unknown>): never {
  throw new AttestationError('REPORT_INVALID', `HCL report: ${message}`, { details: { field, ...details } });
}
