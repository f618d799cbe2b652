/**
 * The what-if of `asterism config check|apply`: every node's latest evidence judged against a
 * proposed attestation config (docs/protocol/continuous-attestation.md).
 */
import type { AttestationConfig } from '@asterism/attestation';
import { judgeSummary, type NodeView } from '@asterism/node-attestation';

/** One node's answer. `unknown`: no evidence stored yet (the monitor has not checked it). */
export interface WhatIfRow {
  node: string;
  quarantined: boolean;
  outcome: 'accept' | 'refuse' | 'unknown';
  why: string;
}

/** Judges every node. */
export function whatIf(nodes: NodeView[], config: AttestationConfig): WhatIfRow[] {
  return [...nodes]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((n) => {
      if (!n.evidence) return { node: n.name, quarantined: n.quarantined, outcome: 'unknown', why: 'no evidence stored yet (not checked by the attestation monitor)' };
      const f = judgeSummary(n.evidence, config);
      return { node: n.name, quarantined: n.quarantined, outcome: f.ok ? 'accept' : 'refuse', why: `${f.message} (evidence of ${n.evidence.at})` };
    });
}

/** Lines such as `would refuse worker-1: PCR[4] differs (evidence of ...)`. */
export function formatWhatIf(rows: WhatIfRow[]): string {
  return rows.map((r) => `${r.outcome === 'accept' ? 'would accept' : r.outcome === 'refuse' ? 'would refuse' : 'cannot judge'} ${r.node}${r.quarantined ? ' (quarantined)' : ''}: ${r.why}`).join('\n');
}

/** Running nodes (not quarantined) the config would refuse: what `config apply` refuses to do without --force. */
export function wouldQuarantine(rows: WhatIfRow[]): WhatIfRow[] {
  return rows.filter((r) => r.outcome === 'refuse' && !r.quarantined);
}
