import { Counter, Histogram, type Registry } from 'prom-client';

/** Join-specific Prometheus metrics (next to the generic gRPC ones of ServiceMetrics). */
export class JoinMetrics {
  readonly issued: Counter<'kind' | 'variant'>;
  readonly refused: Counter<'kind' | 'reason' | 'variant'>;
  readonly duration: Histogram<'kind' | 'outcome'>;

  constructor(registry: Registry) {
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
    this.duration = new Histogram({
      name: 'joinservice_ticket_duration_seconds',
      help: 'Time to issue (or refuse) a ticket after attestation.',
      labelNames: ['kind', 'outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
  }
}
