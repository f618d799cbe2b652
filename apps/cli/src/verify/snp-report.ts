import { AttestationError, decodeDocument, decodeSnpInstanceInfo, formatTcb, parseReport, productLineOf, type SnpReport } from '@asterism/attestation';

/** The SNP report inside an aws-/azure-/gcp-sev-snp document (undefined for other documents). */
export function snpReportOf(document: Uint8Array): SnpReport | undefined {
  try {
    return parseReport(decodeSnpInstanceInfo(decodeDocument(document).instanceInfo).attestationReport);
  } catch {
    return undefined;
  }
}

function policyText(r: SnpReport): string {
  const p = r.policy;
  const flags = [p.debug && 'DEBUG', p.migrateMa && 'MIGRATE_MA', p.smt && 'SMT', p.singleSocket && 'SINGLE_SOCKET'].filter(Boolean).join(' ');
  return `0x${p.raw.toString(16).padStart(16, '0')} (ABI ${p.abiMajor}.${p.abiMinor}${flags ? `, ${flags}` : ''})`;
}

/** The outcome of the validation as `asterism verify` shows it under the SNP report. */
export type SnpOutcome = { ok: true } | { ok: false; error: Error } | undefined;

/** A version 5 mitigation vector in hex, or why there is none. */
function mitigationText(v: bigint | undefined, version: number): string {
  return v === undefined ? `(none: report version ${version} < 5)` : `0x${v.toString(16).padStart(16, '0')}`;
}

/**
 * Plain-text SNP report facts (policy, VMPL, signer, the four TCBs, mitigation vectors,
 * measurement, ID key digest, chip id, product line) and the outcome: accepted, or the failing
 * check with its code and fields.
 */
export function formatSnpReport(r: SnpReport, outcome: SnpOutcome): string {
  const lines = [
    'SEV-SNP report',
    `  version        ${r.version}, product ${productLineOf(r.cpuid)}, signed by ${r.signingKey.toUpperCase()}`,
    `  policy         ${policyText(r)}`,
    `  VMPL           ${r.vmpl}`,
    `  current TCB    ${formatTcb(r.currentTcb)}`,
    `  reported TCB   ${formatTcb(r.reportedTcb)}`,
    `  committed TCB  ${formatTcb(r.committedTcb)}`,
    `  launch TCB     ${formatTcb(r.launchTcb)}`,
    `  launch mitigations   ${mitigationText(r.launchMitVector, r.version)}`,
    `  current mitigations  ${mitigationText(r.currentMitVector, r.version)}`,
    `  measurement    ${r.measurement.toString('hex')}`,
    `  ID key digest  ${r.idKeyDigest.toString('hex')}`,
    `  chip id        ${r.maskChipKey ? '(masked)' : r.chipId.toString('hex')}`,
  ];
  if (!outcome) lines.push('SNP: not validated');
  else if (outcome.ok) lines.push('SNP: report, certificate chain and TCB checks passed');
  else {
    const err = outcome.error;
    const code = err instanceof AttestationError ? err.code : 'ERROR';
    const details = err instanceof AttestationError && Object.keys(err.details).length > 0 ? ` ${JSON.stringify(err.details)}` : '';
    lines.push(`SNP: failing check ${code}: ${err.message}${details}`);
  }
  return lines.join('\n');
}
