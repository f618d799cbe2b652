import { Counter, type Registry } from 'prom-client';

/** The counters {@link registerCollateralMetrics} reads (CollateralCounts). */
export interface CollateralCountsView {
  readonly lookups: ReadonlyMap<string, number>;
  readonly fetches: ReadonlyMap<string, number>;
  readonly risks: ReadonlyMap<string, number>;
}

/**
 * Exposes collateral cache lookups (hit/miss) and remote fetches (ok/failed/invalid) per cache as
 * `<prefix>_collateral_lookups_total{cache,outcome}` and `<prefix>_collateral_fetches_total{cache,outcome}`,
 * and SEV-SNP early refusal warnings as `<prefix>_snp_refusal_risks_total{kind,subject}`, read at
 * scrape time.
 */
export function registerCollateralMetrics(registry: Registry, prefix: string, counts: CollateralCountsView): void {
  const counter = (name: string, help: string, source: ReadonlyMap<string, number>, labels: [string, string] = ['cache', 'outcome']) => {
    const seen = new Map<string, number>();
    new Counter({
      name: `${prefix}_${name}`,
      help,
      labelNames: labels,
      registers: [registry],
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
  counter('collateral_lookups_total', 'Collateral cache lookups by cache (sev-snp-vcek, sev-snp-cert-chain, tdx-pcs) and outcome (hit: no remote service needed, miss).', counts.lookups);
  counter('collateral_fetches_total', 'Remote collateral fetches (AMD KDS, Intel PCS) by cache and outcome (ok, failed, invalid).', counts.fetches);
  counter(
    'snp_refusal_risks_total',
    'Validations of SEV-SNP nodes that will be refused soon, by kind (certificate-expiry, tcb-minimum) and subject (VCEK, ASK, ARK, REPORTED_TCB, ...).',
    counts.risks,
    ['kind', 'subject'],
  );
}
