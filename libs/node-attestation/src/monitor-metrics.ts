import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Verdict } from './verdict.js';

/** The monitor's Prometheus metrics (docs/protocol/continuous-attestation.md lists them). */
export class MonitorMetrics {
  readonly verdicts: Counter<'status' | 'reason'>;
  readonly checkSeconds: Histogram<'status'>;
  readonly nodeVerified: Gauge<'node'>;
  readonly lastVerified: Gauge<'node'>;
  readonly quarantines: Counter<'outcome'>;
  readonly roundSeconds: Histogram;
  readonly leader: Gauge;
  readonly roundFailures: Counter<'stage'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.verdicts = new Counter({ name: 'attestation_monitor_verdicts_total', help: 'Node verdicts by status and reason.', labelNames: ['status', 'reason'], registers });
    this.checkSeconds = new Histogram({
      name: 'attestation_monitor_check_seconds',
      help: 'Time to fetch and validate one node attestation.',
      labelNames: ['status'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.nodeVerified = new Gauge({ name: 'attestation_monitor_node_verified', help: '1 when the node passed its latest check, 0 when it failed (absent while unchecked).', labelNames: ['node'], registers });
    this.lastVerified = new Gauge({ name: 'attestation_monitor_node_last_verified_timestamp_seconds', help: 'Unix time of the node\'s latest passing check.', labelNames: ['node'], registers });
    this.quarantines = new Counter({ name: 'attestation_monitor_quarantines_total', help: 'Quarantine decisions: yes, warn-only (warn mode), withheld (last healthy control plane).', labelNames: ['outcome'], registers });
    this.roundSeconds = new Histogram({ name: 'attestation_monitor_round_seconds', help: 'Duration of one round over all nodes.', buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120], registers });
    this.leader = new Gauge({ name: 'attestation_monitor_leader', help: '1 while this replica holds the Lease.', registers });
    this.roundFailures = new Counter({ name: 'attestation_monitor_round_failures_total', help: 'Rounds that could not run, by stage.', labelNames: ['stage'], registers });
  }

  /** Records one verdict. */
  observe(v: Verdict): void {
    this.verdicts.inc({ status: v.status, reason: v.reason });
    this.checkSeconds.observe({ status: v.status }, v.latencyMs / 1000);
    if (v.status === 'Unreachable') return;
    this.nodeVerified.set({ node: v.node }, v.status === 'Verified' ? 1 : 0);
    if (v.status === 'Verified') this.lastVerified.set({ node: v.node }, v.at.getTime() / 1000);
  }
}
