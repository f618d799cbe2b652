/**
 * SEV-SNP collateral from AMD KDS (docs/protocol/sev-snp.md §5) through the generic collateral
 * cache (docs/collateral.md): VCEKs keyed by chip id + reported TCB, and the ASK/ASVK chains per
 * signer kind. Certificates are refreshed in the background from 30 days before they expire and
 * never served after (docs/collateral.md "Refresh before expiry"). One SnpCollateral lives as
 * long as the process; each validator (one config, one ARK) looks at it through views whose
 * verifiers check everything against that ARK.
 */
import type { AttestationLogger } from '../interfaces.js';
import { CollateralCache } from '../collateral/cache.js';
import type { CollateralView } from '../collateral/view.js';
import { httpCollateralFetcher } from '../collateral/http-fetcher.js';
import { certificateRefreshAt } from '../collateral/refresh.js';
import type { CollateralMetrics, CollateralStore, VerifiedCollateral } from '../collateral/ports.js';
import { TokenBucket } from '../collateral/rate-limiter.js';
import { AttestationError } from '../errors.js';
import { verifyAsk, verifySignerChain, type SignatureMemo } from './chain.js';
import { parseAmdChain, parseSignerCertificate, type AmdCertificate, type SignerCertificate } from './certs.js';
import { checkReportAgainstSigner } from './checks.js';
import type { TcbVersion } from './tcb.js';

/** AMD's Key Distribution Service. */
export const AMD_KDS_BASE_URL = 'https://kdsintf.amd.com';

/** Cache names (also the ConfigMap family names in the joinservice). */
export const SNP_COLLATERAL_CACHES = { vcek: 'sev-snp-vcek', chain: 'sev-snp-cert-chain' } as const;

/** Key of a VCEK: product line, chip id (hex) and the reported TCB it was derived for. */
export function vcekKey(chipId: Uint8Array, tcb: TcbVersion): string {
  return `Milan/${Buffer.from(chipId).toString('hex')}/${tcb.bootloader}.${tcb.tee}.${tcb.snp}.${tcb.microcode}`;
}

/** Key of a signer kind's ASK/ASVK chain. */
export function chainKey(kind: 'vcek' | 'vlek'): string {
  return `${kind}/Milan`;
}

const VCEK_KEY = /^Milan\/([0-9a-f]{128})\/(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** The KDS URL of a VCEK key (REPORTED_TCB values in decimal). */
export function vcekUrl(base: string, key: string): string {
  const m = VCEK_KEY.exec(key);
  if (!m) throw new Error(`not a VCEK key: ${key}`);
  return `${base}/vcek/v1/Milan/${m[1]}?blSPL=${m[2]}&teeSPL=${m[3]}&snpSPL=${m[4]}&ucodeSPL=${m[5]}`;
}

/** The KDS URL of a chain key. */
export function chainUrl(base: string, key: string): string {
  const kind = key.split('/')[0];
  if ((kind !== 'vcek' && kind !== 'vlek') || key !== chainKey(kind)) throw new Error(`not a chain key: ${key}`);
  return `${base}/${kind}/v1/Milan/cert_chain`;
}

/** Options of {@link SnpCollateral}. */
export interface SnpCollateralOptions {
  /** KDS base URL (tests and mirrors); default AMD's. */
  readonly kdsBaseUrl?: string;
  readonly store?: CollateralStore;
  readonly metrics?: CollateralMetrics;
  readonly logger?: AttestationLogger;
  /** Never contact KDS. */
  readonly offline?: boolean;
  /** Requests per second towards KDS (default 2, burst 4), shared by both caches. */
  readonly kdsRatePerSecond?: number;
  readonly kdsBurst?: number;
  /** One KDS request at most (default 60 s); a validation waits at most its own deadline. */
  readonly fetchTimeoutMs?: number;
  readonly maxWaitMs?: number;
  readonly retry?: { initialDelayMs?: number; maxDelayMs?: number; maxAttempts?: number };
  /** The caches' clock (ms since the epoch; tests pin it; validators pass theirs to `views`). */
  readonly now?: () => number;
}

/** The process-wide SEV-SNP collateral caches. */
export class SnpCollateral {
  readonly vcek: CollateralCache;
  readonly chains: CollateralCache;

  constructor(options: SnpCollateralOptions = {}) {
    const base = (options.kdsBaseUrl ?? AMD_KDS_BASE_URL).replace(/\/$/, '');
    const rateLimiter = new TokenBucket(options.kdsRatePerSecond ?? 2, options.kdsBurst ?? 4);
    const common = {
      rateLimiter,
      ...(options.store ? { store: options.store } : {}),
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.offline ? { offline: true } : {}),
      ...(options.fetchTimeoutMs ? { fetchTimeoutMs: options.fetchTimeoutMs } : {}),
      ...(options.maxWaitMs ? { maxWaitMs: options.maxWaitMs } : {}),
      ...(options.retry ? { retry: options.retry } : {}),
      ...(options.now ? { now: options.now } : {}),
    };
    this.vcek = new CollateralCache({ name: SNP_COLLATERAL_CACHES.vcek, fetch: httpCollateralFetcher((k) => vcekUrl(base, k)), ...common });
    this.chains = new CollateralCache({ name: SNP_COLLATERAL_CACHES.chain, fetch: httpCollateralFetcher((k) => chainUrl(base, k)), ...common });
  }

  /** Reads persisted collateral of both caches (returns the record count). */
  async load(): Promise<number> {
    return (await this.vcek.load()) + (await this.chains.load());
  }

  /** Stops background retries. */
  close(): void {
    this.vcek.close();
    this.chains.close();
  }

  /**
   * Views that verify everything against `ark` at the time `now()` says; `asks` are signing keys
   * known without KDS (configuration, the joinservice's certificate cache), re-verified on use.
   */
  views(ark: AmdCertificate, memo: SignatureMemo, now: () => Date, asks: ConfiguredAsks = {}): SnpCollateralViews {
    return new SnpCollateralViews(this, ark, memo, now, asks);
  }
}

/** ASK (VCEK signer) and ASVK (VLEK signer) known without asking KDS. */
export interface ConfiguredAsks {
  readonly vcek?: AmdCertificate;
  readonly vlek?: AmdCertificate;
}

/** SnpCollateral seen by one validator configuration (one ARK). */
export class SnpCollateralViews {
  readonly chain: CollateralView<AmdCertificate>;
  readonly vcek: CollateralView<SignerCertificate>;

  constructor(
    collateral: SnpCollateral,
    private readonly ark: AmdCertificate,
    private readonly memo: SignatureMemo,
    private readonly now: () => Date,
    private readonly asks: ConfiguredAsks,
  ) {
    this.chain = collateral.chains.view((key, payload) => this.verifyChain(key, payload));
    this.vcek = collateral.vcek.view((key, payload) => this.verifyVcek(key, payload));
  }

  /**
   * The ASK/ASVK for a signer kind, verified against the configured ARK now: a configured one if
   * present, else the KDS chain (cached, or fetched within `signal`).
   */
  async ask(kind: 'vcek' | 'vlek', signal?: AbortSignal): Promise<AmdCertificate> {
    const configured = this.asks[kind];
    if (configured) {
      verifyAsk(this.memo, configured, kind, this.ark, this.now());
      return configured;
    }
    return this.chain.get(chainKey(kind), signal);
  }

  /** A KDS cert_chain answer: its ASK/ASVK must be signed by the configured ARK (its own ARK is ignored). */
  private verifyChain(key: string, payload: Uint8Array): VerifiedCollateral<AmdCertificate> {
    const kind = key.startsWith('vlek/') ? 'vlek' : 'vcek';
    const { ask } = parseAmdChain(Buffer.from(payload).toString('utf8'), `KDS ${kind} cert_chain`);
    if (!ask) throw new AttestationError('CERT_INVALID', `KDS ${kind} cert_chain has no ${kind === 'vcek' ? 'ASK' : 'ASVK'}`);
    verifyAsk(this.memo, ask, kind, this.ark, this.now());
    const notAfter = Math.min(ask.notAfter.getTime(), this.ark.notAfter.getTime());
    return { value: ask, notAfter, refreshAt: certificateRefreshAt(ask.notBefore.getTime(), notAfter) };
  }

  /** A KDS VCEK (DER): it must be the VCEK of the key's chip and TCB, chained to the configured ARK. */
  private async verifyVcek(key: string, payload: Uint8Array): Promise<VerifiedCollateral<SignerCertificate>> {
    const vcek = parseSignerCertificate(payload, 'vcek');
    const m = VCEK_KEY.exec(key);
    if (!m) throw new Error(`not a VCEK key: ${key}`);
    const wantTcb = { bootloader: Number(m[2]), tee: Number(m[3]), snp: Number(m[4]), microcode: Number(m[5]) };
    checkReportAgainstSigner({ signingKey: 'vcek', maskChipKey: false, chipId: Buffer.from(m[1]!, 'hex'), reportedTcb: wantTcb, currentTcb: wantTcb }, vcek);
    const ask = await this.ask('vcek');
    verifySignerChain(this.memo, vcek, ask, this.ark, this.now());
    return { value: vcek, notAfter: vcek.notAfter.getTime(), refreshAt: certificateRefreshAt(vcek.notBefore.getTime(), vcek.notAfter.getTime()) };
  }
}
