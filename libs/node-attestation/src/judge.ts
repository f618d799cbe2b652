/**
 * Judging a running node's evidence: against a validator (a live check) or, for the what-if,
 * a stored evidence summary against a proposed attestation config. Both share the rule that a
 * running node is held to its config without the cluster-ID register, which must instead carry
 * the cluster's mark (docs/protocol/verification.md).
 */
import { AttestationError, compareMeasurements, Measurements, PCR_INDEX_CLUSTER_ID, TDX_INDEX_CLUSTER_ID, variantDescriptor, type AttestationConfig } from '@asterism/attestation';
import { clusterMarkPcr, clusterMarkRtmr, summaryValues, type EvidenceSummary } from './evidence.js';
import type { Verdict, VerdictReason } from './verdict.js';

/** User data of every verification-service document. */
export const VERIFY_USER_DATA = Buffer.from('VerifyService', 'ascii');

/** The config a running node is held to: the attestation config minus its cluster-ID register. */
export function runningNodeConfig(att: AttestationConfig): AttestationConfig {
  const markIndex = variantDescriptor(att.variant).platform === 'tdx' ? TDX_INDEX_CLUSTER_ID : PCR_INDEX_CLUSTER_ID;
  if (!att.measurements.has(markIndex)) return att;
  return { ...att, measurements: Measurements.of([...att.measurements].filter(([index]) => index !== markIndex)) };
}

/** A judgement without the node name and timing. */
export interface Finding {
  ok: boolean;
  reason: VerdictReason;
  field?: string;
  message: string;
}

/** The finding for a validator's rejection: which register or check failed. */
export function findingOfError(err: unknown): Finding {
  if (err instanceof AttestationError && err.code === 'MEASUREMENT_MISMATCH') {
    const mismatches = (err.details?.mismatches ?? []) as Array<{ index: number }>;
    const field = mismatches.map((m) => `PCR[${m.index}]`).join(',') || undefined;
    return { ok: false, reason: 'MeasurementMismatch', ...(field ? { field } : {}), message: err.message };
  }
  const code = err instanceof AttestationError ? err.code : undefined;
  return { ok: false, reason: 'AttestationInvalid', ...(code ? { field: code } : {}), message: err instanceof Error ? err.message : String(err) };
}

/**
 * The cluster mark check: PCR 15 (every vTPM variant) or RTMR2 (qemu-tdx) must equal the mark of
 * `clusterId`. `dummy` has no register and passes (there is nothing to check).
 */
export function checkClusterMark(summary: EvidenceSummary, clusterId: Uint8Array | undefined): Finding {
  if (!clusterId || summary.registers === 'none') return { ok: true, reason: 'Verified', message: 'no cluster mark to check' };
  const [field, index, expected] = summary.registers === 'TD' ? ['RTMR2', TDX_INDEX_CLUSTER_ID, clusterMarkRtmr(clusterId)] : ['PCR[15]', PCR_INDEX_CLUSTER_ID, clusterMarkPcr(clusterId)];
  const actual = summary.values[String(index)];
  if (actual === expected.toString('hex')) return { ok: true, reason: 'Verified', message: 'cluster mark matches' };
  return { ok: false, reason: 'ClusterMarkMismatch', field, message: `${field} is ${actual ? `${actual.slice(0, 16)}…` : 'missing'}, not this cluster's mark (not a member, or not bootstrapped)` };
}

/**
 * Whether a refused verdict is only the missing mark of a node that booted and has not rejoined
 * yet (docs/protocol/continuous-attestation.md "Readmitting a rebooted node"): the validator and
 * the user data passed (the mark is checked last), the cluster-ID register still holds its boot
 * value (all zeros), and the attestation key is the one of the node's last stored evidence, so it
 * is the same machine. Its rejoin is then checked again by the joinservice, which marks it.
 */
export function awaitingRejoin(verdict: Verdict, lastEvidence: EvidenceSummary | undefined): boolean {
  const e = verdict.evidence;
  if (verdict.reason !== 'ClusterMarkMismatch' || !e || e.registers === 'none' || !lastEvidence) return false;
  const mark = e.values[String(e.registers === 'TD' ? TDX_INDEX_CLUSTER_ID : PCR_INDEX_CLUSTER_ID)];
  return mark !== undefined && /^0+$/.test(mark) && e.akDigest === lastEvidence.akDigest && !e.akDigest.startsWith('none:');
}

/**
 * The what-if: would `config` accept the node whose latest evidence is `summary`? Compares the
 * enforced registers of the running-node config with the stored values. A different variant is
 * refused outright. Only measurements can be judged from a summary; signatures and TCB were judged
 * when the evidence was taken.
 */
export function judgeSummary(summary: EvidenceSummary, config: AttestationConfig): Finding {
  if (summary.variant !== String(config.variant)) {
    return { ok: false, reason: 'AttestationInvalid', field: 'variant', message: `the node attests as ${summary.variant}, the config is for ${String(config.variant)}` };
  }
  const result = compareMeasurements(runningNodeConfig(config).measurements, summaryValues(summary));
  if (result.errors.length === 0) return { ok: true, reason: 'Verified', message: result.warnings.length ? `accepted with warnings: ${result.warnings.map((w) => label(summary, w.index)).join(', ')} differ (warn-only)` : 'accepted' };
  const fields = result.errors.map((e) => label(summary, e.index));
  return { ok: false, reason: 'MeasurementMismatch', field: fields.join(','), message: `${fields.join(', ')} ${fields.length === 1 ? 'differs' : 'differ'}` };
}

function label(summary: EvidenceSummary, index: number): string {
  return summary.registers === 'TD' ? (index === 0 ? 'MRTD' : `RTMR${index - 1}`) : `PCR[${index}]`;
}
