import { Counter, Histogram, type Registry } from 'prom-client';
import { registerCollateralMetrics, type CollateralCountsView } from '@asterism/validator-sources';

/** Join-specific Prometheus metrics (next to the generic gRPC ones of ServiceMetrics). */
export class JoinMetrics {
  readonly issued: Counter<'kind' | 'variant'>;
  readonly refused: Counter<'kind' | 'reason' | 'variant'>;
  readonly measurementMismatches: Counter<'variant' | 'pcr'>;
  readonly duration: Histogram<'kind' | 'outcome'>;
  readonly #registry: Registry;

  constructor(registry: Registry) {
    this.#registry = registry;
    this.issued = new Counter({
      name: 'joinservice_tickets_issued_total',
      help: 'Join and rejoin tickets issued, by kind and attestation variant.',
      labelNames: ['kind', 'variant'],
      registers: [registry],
    });
    this.refused = new Counter({
      name: 'joinservice_tickets_refused_total',
      help: 'Refused join/rejoin attempts by kind, reason code and attestation variant (attestation refusals have kind "attestation").',
      labelNames: ['kind', 'reason', 'variant'],
      registers: [registry],
    });
    this.measurementMismatches = new Counter({
      name: 'joinservice_measurement_mismatches_total',
      help: 'Enforced measurements that differed in refused attestations, one per register index (pcr: the PCR for vTPM variants, the register index otherwise) and attestation variant.',
      labelNames: ['variant', 'pcr'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'joinservice_ticket_duration_seconds',
      help: 'Time to issue (or refuse) a ticket after attestation.',
      labelNames: ['kind', 'outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
  }

  /**
   * Exposes the transport's pre-attestation refusals (per-address limits, rate, reserve, bad SNI,
   * unverified timeouts) as `joinservice_connections_refused_total{reason}`, read at scrape time.
   */
  observeConnectionRefusals(source: () => Readonly<Record<string, number>>): void {
    const seen = new Map<string, number>();
    new Counter({
      name: 'joinservice_connections_refused_total',
      help: 'Connections refused or closed before attestation, by reason (docs/adr/0007).',
      labelNames: ['reason'],
      registers: [this.#registry],
      collect() {
        for (const [reason, total] of Object.entries(source())) {
          const delta = total - (seen.get(reason) ?? 0);
          if (delta > 0) this.inc({ reason }, delta);
          seen.set(reason, total);
        }
      },
    });
  }

  /** Exposes collateral cache counters as `joinservice_collateral_*_total` and `joinservice_snp_refusal_risks_total` (collateral-metrics in libs/validator-sources). */
  observeCollateral(counts: CollateralCountsView): void {
    registerCollateralMetrics(this.#registry, 'joinservice', counts);
  }
}
