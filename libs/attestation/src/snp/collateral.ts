/**
 * SEV-SNP collateral from AMD KDS (docs/protocol/sev-snp.md §5) through the generic collateral
 * cache (docs/collateral.md): VCEKs keyed by product line, hardware id and reported TCB, and the
 * ASK/ASVK chains per signer kind and product line. Certificates are refreshed in the background from 30 days before they expire and
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
import { lineOfArk, verifyAsk, verifySignerChain, type SignatureMemo } from './chain.js';
import { parseAmdChain, parseSignerCertificate, type AmdCertificate, type SignerCertificate } from './certs.js';
import { checkReportAgainstSigner } from './checks.js';
import { AMD_PRODUCT_LINES, hwidLength, type AmdProductLine } from './lines.js';
import type { TcbVersion } from './tcb.js';

/** AMD's Key Distribution Service. */
export const AMD_KDS_BASE_URL = 'https://kdsintf.amd.com';

/** Cache names (also the ConfigMap family names in the joinservice). */
export const SNP_COLLATERAL_CACHES = { vcek: 'sev-snp-vcek', chain: 'sev-snp-cert-chain' } as const;

/**
 * Key of a VCEK: product line, hardware id (hex: CHIP_ID, or its first 8 bytes on Turin) and the
 * reported TCB it was derived for (`bl.tee.snp.ucode`; Turin `fmc.bl.tee.snp.ucode`).
 */
export function vcekKey(chipId: Uint8Array, tcb: TcbVersion, line: AmdProductLine = 'Milan'): string {
  const hwid = Buffer.from(chipId.subarray(0, hwidLength(line))).toString('hex');
  const spl = [...(line === 'Turin' ? [tcb.fmc ?? 0] : []), tcb.bootloader, tcb.tee, tcb.snp, tcb.microcode].join('.');
  return `${line}/${hwid}/${spl}`;
}

/** Key of a signer kind's ASK/ASVK chain of a product line. */
export function chainKey(kind: 'vcek' | 'vlek', line: AmdProductLine = 'Milan'): string {
  return `${kind}/${line}`;
}

/** A parsed VCEK key. */
interface ParsedVcekKey {
  readonly line: AmdProductLine;
  readonly hwid: string;
  readonly tcb: TcbVersion;
}

const VCEK_KEY = /^(Milan|Genoa)\/([0-9a-f]{128})\/(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const TURIN_VCEK_KEY = /^(Turin)\/([0-9a-f]{16})\/(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function parseVcekKey(key: string): ParsedVcekKey {
  const turin = TURIN_VCEK_KEY.exec(key);
  if (turin) {
    const [fmc, bootloader, tee, snp, microcode] = turin.slice(3).map(Number) as [number, number, number, number, number];
    return { line: 'Turin', hwid: turin[2]!, tcb: { fmc, bootloader, tee, snp, microcode } };
  }
  const m = VCEK_KEY.exec(key);
  if (!m) throw new Error(`not a VCEK key: ${key}`);
  const [bootloader, tee, snp, microcode] = m.slice(3).map(Number) as [number, number, number, number];
  return { line: m[1] as AmdProductLine, hwid: m[2]!, tcb: { bootloader, tee, snp, microcode } };
}

/**
 * The KDS URL of a VCEK key (TCB values in decimal): `/vcek/v1/<line>/<hwid>?blSPL=…&teeSPL=…&snpSPL=…&ucodeSPL=…`,
 * on Turin with the 8-byte hardware id and `fmcSPL` first (docs/protocol/sev-snp.md §5).
 */
export function vcekUrl(base: string, key: string): string {
  const { line, hwid, tcb } = parseVcekKey(key);
  const fmc = line === 'Turin' ? `fmcSPL=${tcb.fmc}&` : '';
  return `${base}/vcek/v1/${line}/${hwid}?${fmc}blSPL=${tcb.bootloader}&teeSPL=${tcb.tee}&snpSPL=${tcb.snp}&ucodeSPL=${tcb.microcode}`;
}

/** The KDS URL of a chain key. */
export function chainUrl(base: string, key: string): string {
  const [kind, line] = key.split('/');
  if ((kind !== 'vcek' && kind !== 'vlek') || !AMD_PRODUCT_LINES.includes(line as AmdProductLine) || key !== chainKey(kind, line as AmdProductLine)) throw new Error(`not a chain key: ${key}`);
  return `${base}/${kind}/v1/${line}/cert_chain`;
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

/** SnpCollateral seen by one validator configuration and product line (one ARK). */
export class SnpCollateralViews {
  readonly chain: CollateralView<AmdCertificate>;
  readonly vcek: CollateralView<SignerCertificate>;
  /** The product line of the ARK. */
  readonly line: AmdProductLine;

  constructor(
    collateral: SnpCollateral,
    private readonly ark: AmdCertificate,
    private readonly memo: SignatureMemo,
    private readonly now: () => Date,
    private readonly asks: ConfiguredAsks,
  ) {
    this.line = lineOfArk(ark) ?? 'Milan';
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
    return this.chain.get(chainKey(kind, this.line), signal);
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

  /** A KDS VCEK (DER): it must be the VCEK of the key's line, hardware id and TCB, chained to the configured ARK. */
  private async verifyVcek(key: string, payload: Uint8Array): Promise<VerifiedCollateral<SignerCertificate>> {
    const { line, hwid, tcb } = parseVcekKey(key);
    if (line !== this.line) throw new AttestationError('CERT_INVALID', `VCEK key ${key} is for ${line}, this view verifies ${this.line}`, { details: { field: 'productLine', expected: this.line, actual: line } });
    const vcek = parseSignerCertificate(payload, 'vcek', line);
    const chipId = Buffer.concat([Buffer.from(hwid, 'hex'), Buffer.alloc(64 - hwid.length / 2)]);
    checkReportAgainstSigner({ signingKey: 'vcek', maskChipKey: false, chipId, reportedTcb: tcb, currentTcb: tcb }, vcek);
    const ask = await this.ask('vcek');
    verifySignerChain(this.memo, vcek, ask, this.ark, this.now());
    return { value: vcek, notAfter: vcek.notAfter.getTime(), refreshAt: certificateRefreshAt(vcek.notBefore.getTime(), vcek.notAfter.getTime()) };
  }
}
