import {
  SnpCollateral,
  type CollateralFetchOutcome,
  type CollateralLookupOutcome,
  type CollateralMetrics,
  type CollateralStore,
  type SnpValidatorDependencies,
  type SnpWarningOptions,
  type UpcomingTcbMinimum,
} from '@asterism/attestation';
import type { Logger } from '@asterism/logger';
import { CertCacheError, type CertCache } from './cert-cache.js';

/**
 * Collateral lookups and fetches counted by cache and outcome; services expose them as
 * Prometheus counters read at scrape time (`<service>_collateral_*_total`, collateral-metrics.ts).
 */
export class CollateralCounts implements CollateralMetrics {
  readonly lookups = new Map<string, number>();
  readonly fetches = new Map<string, number>();
  /** SEV-SNP early refusal warnings by kind and subject (`<service>_snp_refusal_risks_total`). */
  readonly risks = new Map<string, number>();

  lookup(cache: string, outcome: CollateralLookupOutcome): void {
    bump(this.lookups, `${cache}\u0000${outcome}`);
  }

  fetch(cache: string, outcome: CollateralFetchOutcome): void {
    bump(this.fetches, `${cache}\u0000${outcome}`);
  }

  risk(kind: string, subject: string): void {
    bump(this.risks, `${kind}\u0000${subject}`);
  }
}

function bump(m: Map<string, number>, k: string): void {
  m.set(k, (m.get(k) ?? 0) + 1);
}

/** What {@link snpValidatorDependencies} needs from the service building it. */
export interface SnpDependencySources {
  /** Which KDS chain the certificate cache keeps (the variant descriptor's `amdSigner`); none = no cache. */
  readonly signer?: 'vcek' | 'vlek';
  readonly certCache: Pick<CertCache, 'load' | 'cached'>;
  readonly store: CollateralStore;
  readonly metrics: CollateralMetrics & Pick<CollateralCounts, 'risk'>;
  readonly logger: Logger;
  /** Warn about nodes refused within this many days (certificate expiry); default 30. */
  readonly warnWithinDays?: number;
  /** A minimum TCB that takes effect later (warned about before, enforced after). */
  readonly upcomingMinimumTcb?: UpcomingTcbMinimum;
  readonly offline: boolean;
  /** AMD KDS base URL (mirrors, tests); default AMD's. */
  readonly kdsBaseUrl?: string;
}

/**
 * The process-wide dependencies of the SNP validators: one KDS collateral cache (VCEKs by chip id
 * and TCB, ASK/ASVK chains) persisted in ConfigMaps, the ASK/ASVK of the `sev-snp-cert-cache`
 * ConfigMap as signing keys known without KDS (the `amd-kds` source of ../sources.ts;
 * MAA and the GCE identity are sources of their own). An unreachable KDS at start-up is a warning, not a failure: collateral seen before is
 * persisted, and anything else is fetched (bounded by the handshake) when a node needs it.
 */
export async function snpValidatorDependencies(s: SnpDependencySources): Promise<SnpValidatorDependencies> {
  const collateral = new SnpCollateral({
    store: s.store,
    metrics: s.metrics,
    logger: s.logger,
    offline: s.offline,
    ...(s.kdsBaseUrl ? { kdsBaseUrl: s.kdsBaseUrl } : {}),
  });
  const loaded = await collateral.load();
  s.logger.info('SEV-SNP collateral cache loaded', { records: loaded, offline: s.offline });
  const cachedSigningKeys = await signingKeysFromCertCache(s);
  return { collateral, cachedSigningKeys, warnings: refusalWarnings(s) };
}

/** Early refusal warnings: counted on every validation, logged once per distinct finding. */
function refusalWarnings(s: SnpDependencySources): SnpWarningOptions {
  const logged = new Set<string>();
  return {
    withinDays: s.warnWithinDays ?? 30,
    ...(s.upcomingMinimumTcb ? { upcomingMinimumTcb: s.upcomingMinimumTcb } : {}),
    sink: (risk) => {
      s.metrics.risk(risk.kind, risk.subject);
      if (logged.has(risk.message)) return;
      if (logged.size >= 1024) logged.clear();
      logged.add(risk.message);
      s.logger.warn(`SEV-SNP node will be refused soon: ${risk.message}`, { kind: risk.kind, subject: risk.subject, daysLeft: risk.daysLeft, ...risk.details });
    },
  };
}

/**
 * The ASK/ASVK of the certificate cache: filled from KDS when empty and reachable; offline, read
 * from the ConfigMap as it is (never fetched, never written).
 */
async function signingKeysFromCertCache(s: SnpDependencySources): Promise<string[]> {
  const signer = s.signer;
  if (!signer) return [];
  if (s.offline) {
    const chain = await s.certCache.cached();
    if (!chain.ask) s.logger.warn('offline: the SEV-SNP certificate cache holds no ASK; nodes need one in the attestation config or the collateral cache', { signer });
    return chain.ask ? [chain.ask] : [];
  }
  try {
    const chain = await s.certCache.load(signer);
    return chain.ask ? [chain.ask] : [];
  } catch (err) {
    if (!(err instanceof CertCacheError) || err.code !== 'KDS_UNAVAILABLE') throw err;
    s.logger.warn('AMD KDS is unreachable and the certificate cache is empty; the ASK is fetched when a node first needs it', { error: err.message });
    return [];
  }
}
