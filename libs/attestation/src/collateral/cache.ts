/**
 * A keyed cache of verified collateral (vendor certificates, signed TCB data) that keeps
 * attestation working when the vendor's service is slow, throttling or down (docs/collateral.md):
 *
 * - raw records come from configuration, the persistence port, evidence, or the remote service;
 * - a *view* binds the cache to one verifier (one trust anchor): every record is verified by the
 *   view before its first use, so changing the configured root re-verifies everything;
 * - a miss fetches once per key (concurrent lookups share the fetch), through a shared token
 *   bucket, bounded by the fetch timeout; callers wait at most until their own signal or
 *   `maxWaitMs`, while the fetch may finish later and fill the cache for the next caller;
 * - failures back off per key (fail fast meanwhile) and retry in the background;
 * - records past their refresh point are refreshed in the background (at most once per
 *   `refreshIntervalMs` per key) while they are still served;
 * - offline mode never contacts the remote service.
 */
import { NOP_ATTESTATION_LOGGER, type AttestationLogger } from '../interfaces.js';
import { CollateralError } from './errors.js';
import {
  NOP_COLLATERAL_METRICS,
  type CollateralEntry,
  type CollateralFetcher,
  type CollateralMetrics,
  type CollateralStore,
  type CollateralVerifier,
} from './ports.js';
import { TokenBucket } from './rate-limiter.js';
import { raceAbort } from './race-abort.js';
import { CollateralView } from './view.js';
import { DEFAULT_RETRY_POLICY, FailureTable, type RetryPolicy } from './retry-state.js';

export type { CollateralEntry, CollateralSource } from './ports.js';

/** Options of {@link CollateralCache}. */
export interface CollateralCacheOptions {
  /** Names the cache in metrics, logs, errors and the store (e.g. `sev-snp-vcek`). */
  readonly name: string;
  /** The remote service; without it the cache only serves configured/stored/provided records. */
  readonly fetch?: CollateralFetcher;
  readonly store?: CollateralStore;
  readonly metrics?: CollateralMetrics;
  readonly logger?: AttestationLogger;
  /** Never contact the remote service. */
  readonly offline?: boolean;
  /** Shared limiter towards the remote service (default: 1 request/s, burst 5, per cache). */
  readonly rateLimiter?: TokenBucket;
  /** Upper bound of one remote fetch, independent of its callers (default 60 s). */
  readonly fetchTimeoutMs?: number;
  /** Longest a lookup waits for a fetch when its caller gives no earlier deadline (default 10 s). */
  readonly maxWaitMs?: number;
  readonly retry?: Partial<RetryPolicy>;
  /**
   * Least time between two background refreshes of one key (default 1 h), so a service that still
   * serves the same record is not asked again on every lookup.
   */
  readonly refreshIntervalMs?: number;
  /** Clock (ms since the epoch); tests pin it. */
  readonly now?: () => number;
}

/** A cache of raw collateral records shared by every verifier (view) of one kind of collateral. */
export class CollateralCache {
  readonly name: string;
  readonly #entries = new Map<string, CollateralEntry>();
  readonly #inflight = new Map<string, Promise<CollateralEntry>>();
  readonly #failures: FailureTable;
  readonly #persisting = new Set<Promise<void>>();
  /** When the last background refresh of a key started. */
  readonly #refreshed = new Map<string, number>();
  readonly #closed = new AbortController();
  readonly #limiter: TokenBucket;
  readonly #metrics: CollateralMetrics;
  readonly #logger: AttestationLogger;
  readonly now: () => number;

  constructor(private readonly options: CollateralCacheOptions) {
    this.name = options.name;
    this.now = options.now ?? Date.now;
    this.#failures = new FailureTable({ ...DEFAULT_RETRY_POLICY, ...options.retry });
    this.#limiter = options.rateLimiter ?? new TokenBucket(1, 5);
    this.#metrics = options.metrics ?? NOP_COLLATERAL_METRICS;
    this.#logger = options.logger ?? NOP_ATTESTATION_LOGGER;
  }

  /** Whether lookups may contact the remote service. */
  get online(): boolean {
    return !this.options.offline && this.options.fetch !== undefined;
  }

  /** Reads every persisted record into memory (configured records keep priority); returns the count. */
  async load(): Promise<number> {
    if (!this.options.store) return 0;
    const records = await this.options.store.list(this.name);
    for (const r of records) if (this.#entries.get(r.key)?.source !== 'configured') this.#entries.set(r.key, { ...r, source: 'stored' });
    this.#logger.info('collateral cache loaded', { cache: this.name, records: records.length });
    return records.length;
  }

  /** Adds collateral from configuration: used before anything else, never persisted. */
  configure(key: string, payload: Uint8Array): void {
    this.#entries.set(key, { key, payload, fetchedAt: this.now(), source: 'configured' });
  }

  /** The raw record of a key, if any. */
  entry(key: string): CollateralEntry | undefined {
    return this.#entries.get(key);
  }

  /** Keys currently held (tests, diagnostics). */
  keys(): string[] {
    return [...this.#entries.keys()];
  }

  /** A verifying view: lookups through it only ever return what `verify` accepted. */
  view<V>(verify: CollateralVerifier<V>): CollateralView<V> {
    return new CollateralView(this, verify);
  }

  /** Drops a record that failed verification (configured ones stay: they are the operator's). */
  discard(entry: CollateralEntry): void {
    if (entry.source !== 'configured' && this.#entries.get(entry.key) === entry) {
      this.#entries.delete(entry.key);
      this.#refreshed.delete(entry.key);
    }
  }

  /** Keeps a verified record in memory and persists it (persistence failures are only logged). */
  accept(key: string, payload: Uint8Array, source: 'provided' | 'fetched'): CollateralEntry {
    const existing = this.#entries.get(key);
    if (existing?.source === 'configured') return existing;
    if (existing && Buffer.from(existing.payload).equals(Buffer.from(payload))) return existing;
    const entry: CollateralEntry = { key, payload, fetchedAt: this.now(), source };
    this.#entries.set(key, entry);
    this.#failures.clear(key);
    const store = this.options.store;
    if (store) {
      const p = store
        .put(this.name, { key, payload, fetchedAt: entry.fetchedAt })
        .catch((err: unknown) => this.#logger.warn('persisting collateral failed', { cache: this.name, key, error: (err as Error)?.message ?? String(err) }))
        .finally(() => this.#persisting.delete(p));
      this.#persisting.add(p);
    }
    return entry;
  }

  /** Waits until every started persist finished (tests, shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.#persisting]);
  }

  /** Waits until every running fetch (background refreshes included) settled, then every persist (tests). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#inflight.values()]);
    await this.flush();
  }

  /** Number of keys in failure/backoff state (tests, diagnostics). */
  get failingKeys(): number {
    return this.#failures.size;
  }

  /** Stops background retries and aborts running fetches. */
  close(): void {
    this.#closed.abort(new Error(`collateral cache ${this.name} closed`));
    this.#failures.clearAll();
  }

  /** @internal Counts a lookup. */
  countLookup(outcome: 'hit' | 'miss'): void {
    this.#metrics.lookup(this.name, outcome);
  }

  /**
   * @internal Starts a background refresh of a cached key for a view, unless the cache is
   * offline, a fetch of the key runs, the key backs off after failures, or a refresh of it started
   * less than `refreshIntervalMs` ago. Lookups keep being served the cached record meanwhile.
   */
  refresh<V>(key: string, view: CollateralView<V>): void {
    const now = this.now();
    if (!this.online || this.#inflight.has(key)) return;
    const last = this.#refreshed.get(key);
    if (last !== undefined && now - last < (this.options.refreshIntervalMs ?? 3_600_000)) return;
    const failing = this.#failures.get(key);
    if (failing && now < failing.notBefore) return;
    this.#refreshed.set(key, now);
    this.startFetch(key, view).catch(() => undefined);
  }

  /**
   * @internal Gets a record from the remote service for a view: fails fast while the key backs
   * off; otherwise joins or starts the shared fetch and waits at most until `signal` or
   * `maxWaitMs`. `expiredAt` says the cached record exists but expired then (for the error).
   */
  async fetchFor<V>(key: string, view: CollateralView<V>, signal: AbortSignal | undefined, expiredAt?: number): Promise<CollateralEntry> {
    const held = expiredAt === undefined ? 'is not cached' : `is cached only past its expiry (${new Date(expiredAt).toISOString()})`;
    const unavailable = (reason: string, extra: Record<string, unknown> = {}, cause?: unknown) =>
      new CollateralError('COLLATERAL_UNAVAILABLE', `${this.name} collateral for ${key} ${held} and ${reason}`, {
        details: { cache: this.name, key, reason, ...(expiredAt === undefined ? {} : { expiredAt: new Date(expiredAt).toISOString() }), ...extra },
        ...(cause === undefined ? {} : { cause }),
      });
    if (!this.online) throw unavailable(this.options.offline ? 'the cache is offline' : 'no remote service is configured', { offline: true });
    const failing = this.#failures.get(key);
    if (failing && !this.#inflight.has(key) && this.now() < failing.notBefore) {
      throw unavailable(`the remote service failed recently (${failing.lastError}); next attempt in ${Math.ceil((failing.notBefore - this.now()) / 1000)} s`, {
        failures: failing.failures,
        lastError: failing.lastError,
      });
    }
    const shared = this.#inflight.get(key) ?? this.startFetch(key, view);
    const wait = AbortSignal.any([...(signal ? [signal] : []), AbortSignal.timeout(this.options.maxWaitMs ?? 10_000), this.#closed.signal]);
    try {
      return await raceAbort(shared, wait);
    } catch (err) {
      if (err instanceof CollateralError) throw err;
      if (wait.aborted && !(err instanceof FetchFailed)) throw unavailable('the remote service did not answer in time', { deadline: true }, err);
      const inner = err instanceof FetchFailed ? err.cause : err;
      throw unavailable(`fetching it failed: ${(inner as Error)?.message ?? String(inner)}`, {}, inner);
    }
  }

  /** One shared fetch of `key`, verified by `view`, then accepted; failures are recorded. */
  private startFetch<V>(key: string, view: CollateralView<V>): Promise<CollateralEntry> {
    const run = this.fetchAndVerify(key, view).finally(() => this.#inflight.delete(key));
    run.catch(() => undefined);
    this.#inflight.set(key, run);
    return run;
  }

  private async fetchAndVerify<V>(key: string, view: CollateralView<V>): Promise<CollateralEntry> {
    const signal = AbortSignal.any([AbortSignal.timeout(this.options.fetchTimeoutMs ?? 60_000), this.#closed.signal]);
    let payload: Uint8Array;
    try {
      await this.#limiter.take(signal);
      payload = await this.options.fetch!(key, signal);
    } catch (err) {
      this.#metrics.fetch(this.name, 'failed');
      this.failed(key, view, err);
      throw new FetchFailed(err);
    }
    try {
      await view.verifyRaw(key, payload);
    } catch (err) {
      this.#metrics.fetch(this.name, 'invalid');
      this.failed(key, view, err);
      throw new CollateralError('COLLATERAL_INVALID', `${this.name} collateral for ${key} from the remote service does not verify: ${(err as Error)?.message ?? String(err)}`, {
        details: { cache: this.name, key },
        cause: err,
      });
    }
    this.#metrics.fetch(this.name, 'ok');
    const recovered = this.#failures.get(key) !== undefined;
    const entry = this.accept(key, payload, 'fetched');
    if (recovered) this.#logger.info('collateral fetched after earlier failures', { cache: this.name, key });
    return entry;
  }

  /** Records a failure and schedules the background retry, if one is due. */
  private failed<V>(key: string, view: CollateralView<V>, err: unknown): void {
    if (this.#closed.signal.aborted) return;
    const { state, retryIn } = this.#failures.record(key, err, this.now());
    this.#logger.warn('fetching collateral failed', { cache: this.name, key, failures: state.failures, error: state.lastError, retryInMs: retryIn ?? null });
    if (retryIn === undefined) return;
    state.timer = setTimeout(() => {
      state.timer = undefined;
      if (this.#entries.has(key) || this.#inflight.has(key)) return;
      this.startFetch(key, view).catch(() => undefined);
    }, retryIn);
    state.timer.unref();
  }
}

/** Marks a failure of the remote fetch itself (as opposed to the caller's deadline). */
class FetchFailed extends Error {
  constructor(cause: unknown) {
    super('collateral fetch failed', { cause });
  }
}
