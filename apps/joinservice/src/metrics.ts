import { Counter, Histogram, type Registry } from 'prom-client';

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

  /**
   * Exposes collateral cache lookups (hit/miss) and remote fetches (ok/failed/invalid) per cache
   * as `joinservice_collateral_lookups_total{cache,outcome}` and
   * `joinservice_collateral_fetches_total{cache,outcome}`, and SEV-SNP early refusal warnings as
   * `joinservice_snp_refusal_risks_total{kind,subject}`, read at scrape time.
   */
  observeCollateral(counts: { readonly lookups: ReadonlyMap<string, number>; readonly fetches: ReadonlyMap<string, number>; readonly risks: ReadonlyMap<string, number> }): void {
    const counter = (name: string, help: string, source: ReadonlyMap<string, number>, labels: [string, string] = ['cache', 'outcome']) => {
      const seen = new Map<string, number>();
      new Counter({
        name,
        help,
        labelNames: labels,
        registers: [this.#registry],
        collect() {
          for (const [key, total] of source) {
            const delta = total - (seen.get(key) ?? 0);
            const [a = '', b = ''] = key.split('\u0000');
            if (delta > 0) this.inc({ [labels[0]]: a, [labels[1]]: b }, delta);
            seen.set(key, total);
          }
        },
      });
    };
    counter('joinservice_collateral_lookups_total', 'Collateral cache lookups by cache (sev-snp-vcek, sev-snp-cert-chain, tdx-pcs) and outcome (hit: no remote service needed, miss).', counts.lookups);
    counter('joinservice_collateral_fetches_total', 'Remote collateral fetches (AMD KDS, Intel PCS) by cache and outcome (ok, failed, invalid).', counts.fetches);
    counter(
      'joinservice_snp_refusal_risks_total',
      'Validations of SEV-SNP nodes that will be refused soon, by kind (certificate-expiry, tcb-minimum) and subject (VCEK, ASK, ARK, REPORTED_TCB, ...).',
      counts.risks,
      ['kind', 'subject'],
    );
  }
}
