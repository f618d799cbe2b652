/**
 * A verdict on one running node (docs/protocol/continuous-attestation.md): what the monitor
 * records as the node's `AttestationVerified` condition, in Events and in metrics.
 */
import type { EvidenceSummary } from './evidence.js';

/** Verified: the node passed; Refused: it answered and failed; Unreachable: it did not answer. */
export type VerdictStatus = 'Verified' | 'Refused' | 'Unreachable';

/**
 * Why, as the condition's `reason` (CamelCase, stable: alerts match on it).
 * - `Verified`: document valid, user data `VerifyService`, measurements and cluster mark match.
 * - `MeasurementMismatch`: an enforced register differs (`field` names it, e.g. `PCR[9]`).
 * - `ClusterMarkMismatch`: the cluster-ID register (PCR 15 / RTMR2) is not this cluster's mark.
 * - `AttestationInvalid`: signature, nonce, certificate chain, TCB or document format refused.
 * - `UserDataMismatch`: a valid document not issued for the verification service.
 * - `Unreachable`: no document within the deadline.
 */
export type VerdictReason = 'Verified' | 'MeasurementMismatch' | 'ClusterMarkMismatch' | 'AttestationInvalid' | 'UserDataMismatch' | 'Unreachable';

/** The outcome of one check of one node. */
export interface Verdict {
  node: string;
  status: VerdictStatus;
  reason: VerdictReason;
  /** The failing register or check, e.g. `PCR[9]`, `PCR[15]`, `RTMR2`, or the validator's error code. */
  field?: string;
  /** One line for humans (no secrets: register values and error texts only). */
  message: string;
  at: Date;
  /** How long the fetch and validation took. */
  latencyMs: number;
  /** What the document showed (absent when the node did not answer). */
  evidence?: EvidenceSummary;
}
