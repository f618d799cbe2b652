/**
 * The report signature (docs/protocol/sev-snp.md §1): ECDSA P-384 with SHA-384 over bytes
 * [0, 0x2A0), R and S stored little-endian in 72-byte fields (converted by the parser).
 */
import { verify, type KeyObject } from 'node:crypto';
import { AttestationError } from '../errors.js';
import type { SnpReport } from './report.js';

/** Throws REPORT_SIGNATURE_INVALID unless `key` signed the report. */
export function verifyReportSignature(report: SnpReport, key: KeyObject, signer: string): void {
  const sig = Buffer.concat([report.signatureR, report.signatureS]);
  let ok: boolean;
  try {
    ok = verify('sha384', report.signedBytes, { key, dsaEncoding: 'ieee-p1363' }, sig);
  } catch {
    ok = false;
  }
  if (!ok) {
    throw new AttestationError('REPORT_SIGNATURE_INVALID', `report signature verification error: the SNP report is not signed by the ${signer} key`, {
      details: { signer },
    });
  }
}
