/** One verifier's view of a collateral cache (docs/collateral.md): records verified before first use. */
import { CollateralError } from './errors.js';
import type { CollateralEntry, CollateralVerifier, VerifiedCollateral } from './ports.js';

/** What a view needs from its cache (CollateralCache, cache.ts): declared here so the view does not import the cache. */
export interface CollateralViewHost {
  readonly name: string;
  now(): number;
  entry(key: string): CollateralEntry | undefined;
  discard(entry: CollateralEntry): void;
  accept(key: string, payload: Uint8Array, source: 'provided' | 'fetched'): CollateralEntry;
  countLookup(outcome: 'hit' | 'miss'): void;
  refresh<V>(key: string, view: CollateralView<V>): void;
  fetchFor<V>(key: string, view: CollateralView<V>, signal: AbortSignal | undefined, expiredAt?: number): Promise<CollateralEntry>;
}

/**
 * The cache seen through one verifier. Verified values are memoised per raw record, so a warm
 * lookup is a map access; a new view (new configuration) verifies every record again.
 */
export class CollateralView<V> {
  readonly #verified = new Map<string, { entry: CollateralEntry | null; payload: Uint8Array; result: VerifiedCollateral<V> }>();

  constructor(
    readonly cache: CollateralViewHost,
    private readonly verify: CollateralVerifier<V>,
  ) {}

  /**
   * The verified collateral for `key`: from memory, the store, configuration or evidence, else
   * from the remote service. Fails with COLLATERAL_UNAVAILABLE (not obtainable in time) or
   * COLLATERAL_INVALID (a configured record does not verify).
   */
  async get(key: string, signal?: AbortSignal): Promise<V> {
    const now = this.cache.now();
    const cached = await this.usable(key, now);
    if (cached && !('expiredAt' in cached)) {
      this.cache.countLookup('hit');
      if (cached.refreshAt !== undefined && now >= cached.refreshAt) this.cache.refresh(key, this);
      return cached.value;
    }
    this.cache.countLookup('miss');
    const entry = await this.cache.fetchFor(key, this, signal, cached?.expiredAt);
    const result = await this.verified(key, entry);
    // A service (or a refresh stored meanwhile) may hand out a record that is already past its
    // expiry: it is never returned, the caller gets the cache's own error instead.
    if (result.notAfter !== undefined && this.cache.now() > result.notAfter) {
      throw new CollateralError('COLLATERAL_UNAVAILABLE', `${this.cache.name} collateral for ${key} from the remote service expired at ${new Date(result.notAfter).toISOString()}`, {
        details: { cache: this.cache.name, key, expiredAt: new Date(result.notAfter).toISOString(), reason: 'the remote service answered with expired collateral' },
      });
    }
    return result.value;
  }

  /**
   * The memoised value if present, verified and not expired (non-configured bad records are
   * dropped); `expiredAt` when the record verifies but is past its `notAfter` (it is not served).
   */
  private async usable(key: string, now: number): Promise<VerifiedCollateral<V> | { expiredAt: number } | undefined> {
    const entry = this.cache.entry(key);
    if (!entry) return undefined;
    let result: VerifiedCollateral<V>;
    try {
      result = await this.verified(key, entry);
    } catch (err) {
      if (entry.source === 'configured') {
        throw new CollateralError('COLLATERAL_INVALID', `configured ${this.cache.name} collateral for ${key} does not verify: ${(err as Error)?.message ?? String(err)}`, {
          details: { cache: this.cache.name, key },
          cause: err,
        });
      }
      this.cache.discard(entry);
      return undefined;
    }
    if (result.notAfter !== undefined && now > result.notAfter) return { expiredAt: result.notAfter };
    return result;
  }

  private async verified(key: string, entry: CollateralEntry): Promise<VerifiedCollateral<V>> {
    const memo = this.#verified.get(key);
    if (memo && memo.entry === entry) return memo.result;
    if (memo && memo.entry === null && Buffer.from(memo.payload).equals(Buffer.from(entry.payload))) {
      this.#verified.set(key, { ...memo, entry });
      return memo.result;
    }
    const result = await this.verify(key, entry.payload, this.cache.now());
    this.#verified.set(key, { entry, payload: entry.payload, result });
    return result;
  }

  /** @internal Verifies a fetched payload before the cache accepts it (remembered for this view). */
  async verifyRaw(key: string, payload: Uint8Array): Promise<VerifiedCollateral<V>> {
    const result = await this.verify(key, payload, this.cache.now());
    this.#verified.set(key, { entry: null, payload, result });
    return result;
  }

  /**
   * Collateral that arrived with evidence (e.g. a certificate inside an attestation document):
   * verified, then cached and persisted so later evidence without it still verifies.
   */
  async provide(key: string, payload: Uint8Array): Promise<V> {
    const current = this.cache.entry(key);
    if (current && Buffer.from(current.payload).equals(Buffer.from(payload))) return (await this.verified(key, current)).value;
    const result = await this.verifyRaw(key, payload);
    this.cache.accept(key, payload, 'provided');
    return result.value;
  }
}
