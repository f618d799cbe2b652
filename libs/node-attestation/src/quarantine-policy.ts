/**
 * What a verdict leads to (docs/protocol/continuous-attestation.md): a pure function of the
 * verdict, the node, how long it has been unreachable, the mode and how many other control planes
 * are healthy, so every rule is a table-tested line.
 */
import type { NodeView } from './node-status.js';
import type { Verdict } from './verdict.js';

/** `enforce` quarantines; `warn` records conditions, Events and metrics only. */
export type EnforcementMode = 'enforce' | 'warn';

/** Inputs of one decision. */
export interface PolicyInput {
  verdict: Verdict;
  node: Pick<NodeView, 'controlPlane' | 'quarantined'>;
  /** When the node's current run of Unreachable verdicts started (undefined: it answered last time). */
  unreachableSince: Date | undefined;
  graceMs: number;
  mode: EnforcementMode;
  /** Healthy control planes other than this node (not quarantined, not failing). */
  otherHealthyControlPlanes: number;
}

/**
 * - `record`: write the condition (false while an unreachable node is within its grace period:
 *   the last verdict stands).
 * - `quarantine`: `yes`, `no`, `already`, `warn-only` (warn mode), or `withheld` (the last healthy
 *   control plane is never quarantined).
 */
export interface Decision {
  record: boolean;
  quarantine: 'yes' | 'no' | 'already' | 'warn-only' | 'withheld';
}

/** Decides what one verdict does. */
export function decide(p: PolicyInput): Decision {
  const v = p.verdict;
  if (v.status === 'Verified') return { record: true, quarantine: 'no' };
  if (v.status === 'Unreachable') {
    const since = p.unreachableSince ?? v.at;
    if (v.at.getTime() - since.getTime() < p.graceMs) return { record: false, quarantine: 'no' };
  }
  if (p.node.quarantined) return { record: true, quarantine: 'already' };
  if (p.mode === 'warn') return { record: true, quarantine: 'warn-only' };
  if (p.node.controlPlane && p.otherHealthyControlPlanes === 0) return { record: true, quarantine: 'withheld' };
  return { record: true, quarantine: 'yes' };
}
