/**
 * Checks of what a report claims, against its signing certificate and the configured policy
 * (docs/protocol/sev-snp.md §1-§3). Each failure names the field, the expected and the actual
 * value; the message keeps the reference's wording where its tests assert it.
 */
import { timingSafeEqual } from 'node:crypto';
import { AttestationError } from '../errors.js';
import type { SignerCertificate } from './certs.js';
import type { SnpReport } from './report.js';
import { firstComponentBelow, firstComponentDiffering, formatTcb, tcbDetails, type TcbComponent, type TcbVersion } from './tcb.js';

/** Guest policy and TCB requirements of one validator. */
export interface SnpReportPolicy {
  /** Required VMPL (the validators use 0). */
  readonly vmpl: number;
  /** Minimum of CURRENT_TCB, COMMITTED_TCB and REPORTED_TCB (Azure uses the config versions). */
  readonly minimumTcb: TcbVersion | undefined;
  /** Minimum of LAUNCH_TCB (every SNP variant uses the config versions). */
  readonly minimumLaunchTcb: TcbVersion | undefined;
  /** Accept CURRENT_TCB above COMMITTED_TCB (firmware updated but not yet committed). */
  readonly permitProvisionalFirmware: boolean;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function tcbError(code: 'TCB_TOO_LOW' | 'TCB_MISMATCH', field: string, component: TcbComponent, actual: TcbVersion, reference: TcbVersion, what: string, relation: string) {
  return new AttestationError(code, `${field} ${formatTcb(actual)} ${relation} ${what} ${formatTcb(reference)} (${component}: ${actual[component]} vs ${reference[component]})`, {
    details: { field, component, expected: reference[component], actual: actual[component], expectedTcb: tcbDetails(reference), actualTcb: tcbDetails(actual) },
  });
}

/** TCB_TOO_LOW unless `actual` >= `minimum` in every component. */
function requireAtLeast(field: string, actual: TcbVersion, minimum: TcbVersion, what: string): void {
  const below = firstComponentBelow(actual, minimum);
  if (below) throw tcbError('TCB_TOO_LOW', field, below, actual, minimum, what, 'is lower than');
}

/**
 * The signing certificate matches the report: VCEK HWID == CHIP_ID (unless the chip id is
 * masked or zero), REPORTED_TCB == the certificate's TCB, and the certificate's TCB is not above
 * CURRENT_TCB.
 */
export function checkReportAgainstSigner(report: Pick<SnpReport, 'signingKey' | 'maskChipKey' | 'chipId' | 'reportedTcb' | 'currentTcb'>, signer: SignerCertificate): void {
  if (signer.kind !== report.signingKey) {
    throw new AttestationError('CERT_INVALID', `report is signed by the ${report.signingKey.toUpperCase()} but the certificate is a ${signer.kind.toUpperCase()}`, {
      details: { field: 'signingKey', expected: report.signingKey, actual: signer.kind },
    });
  }
  const chipMasked = report.maskChipKey || report.chipId.every((b) => b === 0);
  if (signer.kind === 'vcek' && !chipMasked && !(signer.hwid && timingSafeEqual(signer.hwid, report.chipId))) {
    throw new AttestationError('CHIP_ID_MISMATCH', `report CHIP_ID ${hex(report.chipId)} does not match the HWID of the VCEK certificate ${hex(signer.hwid ?? Buffer.alloc(0))}`, {
      details: { field: 'chipId', expected: hex(signer.hwid ?? Buffer.alloc(0)), actual: hex(report.chipId) },
    });
  }
  const differs = firstComponentDiffering(report.reportedTcb, signer.tcb);
  if (differs) throw tcbError('TCB_MISMATCH', 'REPORTED_TCB', differs, report.reportedTcb, signer.tcb, `the TCB of the ${signer.kind.toUpperCase()} certificate`, 'does not match');
  requireAtLeast('CURRENT_TCB', report.currentTcb, signer.tcb, 'the TCB of the V[CL]EK certificate');
}

/**
 * REPORT_DATA_MISMATCH unless REPORT_DATA starts with `expected` (64 bytes: the whole field;
 * shorter: a prefix, as Azure binds a 32-byte digest).
 */
export function checkReportData(report: Pick<SnpReport, 'reportData'>, expected: Uint8Array, binding: string): void {
  const actual = report.reportData.subarray(0, expected.length);
  if (expected.length === 0 || expected.length > 64 || !timingSafeEqual(actual, expected)) {
    throw new AttestationError('REPORT_DATA_MISMATCH', `report REPORT_DATA does not match ${binding}`, {
      details: { field: 'reportData', expected: hex(expected), actual: hex(actual), binding },
    });
  }
}

/** VMPL, guest policy (no debug, no migration agent) and every TCB rule of `policy`. */
export function checkReportClaims(report: SnpReport, policy: SnpReportPolicy): void {
  if (report.vmpl !== policy.vmpl) {
    throw new AttestationError('VMPL_MISMATCH', `report VMPL ${report.vmpl} is not ${policy.vmpl}`, { details: { field: 'vmpl', expected: policy.vmpl, actual: report.vmpl } });
  }
  const forbidden: Array<[keyof SnpReport['policy'], string]> = [
    ['debug', 'debugging'],
    ['migrateMa', 'a migration agent'],
  ];
  for (const [bit, what] of forbidden) {
    if (report.policy[bit]) {
      throw new AttestationError('POLICY_VIOLATION', `report guest policy 0x${report.policy.raw.toString(16)} allows ${what}, which is not permitted`, {
        details: { field: `policy.${bit}`, expected: false, actual: true, policy: `0x${report.policy.raw.toString(16)}` },
      });
    }
  }
  checkTcbRules(report, policy);
}

/** Minimum launch TCB, minimum TCB, and current vs committed (provisional firmware). */
export function checkTcbRules(report: SnpReport, policy: SnpReportPolicy): void {
  if (policy.minimumLaunchTcb) requireAtLeast('LAUNCH_TCB', report.launchTcb, policy.minimumLaunchTcb, 'the policy minimum launch TCB');
  if (policy.minimumTcb) {
    for (const [field, tcb] of [
      ['CURRENT_TCB', report.currentTcb],
      ['COMMITTED_TCB', report.committedTcb],
      ['REPORTED_TCB', report.reportedTcb],
    ] as const) {
      requireAtLeast(field, tcb, policy.minimumTcb, 'the policy minimum TCB');
    }
  }
  if (policy.permitProvisionalFirmware) {
    requireAtLeast('CURRENT_TCB', report.currentTcb, report.committedTcb, "the report's COMMITTED_TCB");
  } else {
    const differs = firstComponentDiffering(report.currentTcb, report.committedTcb);
    if (differs) throw tcbError('TCB_MISMATCH', 'CURRENT_TCB', differs, report.currentTcb, report.committedTcb, "the report's COMMITTED_TCB (provisional firmware is not permitted)", 'does not match');
  }
}
