/**
 * Checks of what a report claims, against its signing certificate and the configured policy
 * (docs/protocol/sev-snp.md §1-§3). Each failure names the field, the expected and the actual
 * value; the message keeps the reference's wording where its tests assert it.
 */
import { timingSafeEqual } from 'node:crypto';
import { AttestationError } from '../errors.js';
import type { SignerCertificate } from './certs.js';
import type { SnpReport } from './report.js';
import { firstComponentBelow, firstComponentDiffering, formatTcb, tcbComponent, tcbDetails, type TcbComponent, type TcbVersion } from './tcb.js';

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
  /** Lowest accepted report VERSION (attestation config `minimumReportVersion`); undefined = any supported. */
  readonly minimumReportVersion?: number;
  /**
   * Mitigation bits that must be set in LAUNCH_MIT_VECTOR / CURRENT_MIT_VECTOR (attestation config
   * `requiredLaunchMitigations` / `requiredCurrentMitigations`); undefined or 0 = not checked. A
   * report without the vectors (version < 5) fails a non-zero requirement.
   */
  readonly requiredLaunchMitigations?: bigint;
  readonly requiredCurrentMitigations?: bigint;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function tcbError(code: 'TCB_TOO_LOW' | 'TCB_MISMATCH', field: string, component: TcbComponent, actual: TcbVersion, reference: TcbVersion, what: string, relation: string) {
  return new AttestationError(code, `${field} ${formatTcb(actual)} ${relation} ${what} ${formatTcb(reference)} (${component}: ${tcbComponent(actual, component)} vs ${tcbComponent(reference, component)})`, {
    details: { field, component, expected: tcbComponent(reference, component), actual: tcbComponent(actual, component), expectedTcb: tcbDetails(reference), actualTcb: tcbDetails(actual) },
  });
}

/** TCB_TOO_LOW unless `actual` >= `minimum` in every component. */
function requireAtLeast(field: string, actual: TcbVersion, minimum: TcbVersion, what: string): void {
  const below = firstComponentBelow(actual, minimum);
  if (below) throw tcbError('TCB_TOO_LOW', field, below, actual, minimum, what, 'is lower than');
}

/** A 64-byte HWID equals CHIP_ID; an 8-byte (Turin) HWID equals its first 8 bytes, and the rest of CHIP_ID is zero. */
function hwidMatches(hwid: Buffer | undefined, chipId: Buffer): boolean {
  if (!hwid || hwid.length === 0 || hwid.length > chipId.length) return false;
  return timingSafeEqual(hwid, chipId.subarray(0, hwid.length)) && chipId.subarray(hwid.length).every((b) => b === 0);
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
  if (signer.kind === 'vcek' && !chipMasked && !hwidMatches(signer.hwid, report.chipId)) {
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

/** REPORT_VERSION_TOO_LOW below the configured minimum version; MITIGATION_MISSING when a required mitigation bit is not set. */
export function checkReportFeatures(report: Pick<SnpReport, 'version' | 'launchMitVector' | 'currentMitVector'>, policy: SnpReportPolicy): void {
  if (policy.minimumReportVersion !== undefined && report.version < policy.minimumReportVersion) {
    throw new AttestationError('REPORT_VERSION_TOO_LOW', `report version ${report.version} is below the configured minimum ${policy.minimumReportVersion}`, {
      details: { field: 'version', expected: policy.minimumReportVersion, actual: report.version },
    });
  }
  for (const [field, required, actual] of [
    ['LAUNCH_MIT_VECTOR', policy.requiredLaunchMitigations, report.launchMitVector],
    ['CURRENT_MIT_VECTOR', policy.requiredCurrentMitigations, report.currentMitVector],
  ] as const) {
    if (!required) continue;
    const missing = required & ~(actual ?? 0n);
    if (missing === 0n) continue;
    const shown = actual === undefined ? `absent (report version ${report.version} < 5)` : `0x${actual.toString(16)}`;
    throw new AttestationError('MITIGATION_MISSING', `report ${field} ${shown} lacks required mitigation bits 0x${missing.toString(16)} (required 0x${required.toString(16)})`, {
      details: { field, expected: `0x${required.toString(16)}`, actual: actual === undefined ? null : `0x${actual.toString(16)}`, missing: `0x${missing.toString(16)}` },
    });
  }
}

/** Report version and mitigations, VMPL, guest policy (no debug, no migration agent) and every TCB rule of `policy`. */
export function checkReportClaims(report: SnpReport, policy: SnpReportPolicy): void {
  checkReportFeatures(report, policy);
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
