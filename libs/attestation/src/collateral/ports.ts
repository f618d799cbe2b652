/**
 * Ports of the collateral cache, declared here by their consumer: persistence (the joinservice
 * backs it with ConfigMaps), metrics (the joinservice backs it with Prometheus counters) and the
 * remote fetch (a variant's HTTP client for its vendor service).
 */

/** One persisted piece of collateral: the raw bytes as the remote service returned them. */
export interface StoredCollateral {
  /** The cache key, e.g. a chip id plus a TCB. */
  readonly key: string;
  readonly payload: Uint8Array;
  /** When it was fetched (ms since the epoch). */
  readonly fetchedAt: number;
}

/**
 * Persistence of verified collateral, so that a restart (or another replica) does not need the
 * remote service for anything seen before. Only collateral that passed verification is saved;
 * whatever is read back is verified again before use.
 */
export interface CollateralStore {
  /** Every record of one cache. */
  list(cache: string): Promise<StoredCollateral[]>;
  /** Saves (or replaces) one record. */
  put(cache: string, record: StoredCollateral): Promise<void>;
}

/** Outcome of one lookup: answered without the remote service (hit) or not (miss). */
export type CollateralLookupOutcome = 'hit' | 'miss';

/** Outcome of one remote fetch. */
export type CollateralFetchOutcome = 'ok' | 'failed' | 'invalid';

/** Counters the cache reports to; all calls are synchronous and must not throw. */
export interface CollateralMetrics {
  lookup(cache: string, outcome: CollateralLookupOutcome): void;
  fetch(cache: string, outcome: CollateralFetchOutcome): void;
}

/** Discards every observation. */
export const NOP_COLLATERAL_METRICS: CollateralMetrics = { lookup: () => undefined, fetch: () => undefined };

/**
 * Fetches the raw collateral for `key` from the remote service. It must stop when `signal`
 * aborts. Throw {@link CollateralFetchError} with `retryAfterMs` to slow down retries.
 */
export type CollateralFetcher = (key: string, signal: AbortSignal) => Promise<Uint8Array>;

/** What a verifier made of raw collateral. */
export interface VerifiedCollateral<V> {
  readonly value: V;
  /** After this instant (ms since the epoch) the value must not be used any more (expiry). */
  readonly notAfter?: number;
  /**
   * After this instant the value is still usable but a fresh copy should be fetched in the
   * background (e.g. signed data past its "next update").
   */
  readonly refreshAt?: number;
}

/**
 * Parses raw collateral and verifies it against the trust anchor the caller is configured with
 * (e.g. a root certificate). It runs for every record before it is used - fetched, read back
 * from the store, or configured - and again whenever a new verifier (a new configuration) asks
 * for the same key. Throwing rejects the record.
 */
export type CollateralVerifier<V> = (key: string, payload: Uint8Array, now: number) => VerifiedCollateral<V> | Promise<VerifiedCollateral<V>>;

/** Where a record came from. Configured records win over every other source. */
export type CollateralSource = 'configured' | 'stored' | 'provided' | 'fetched';

/** A raw record in memory. */
export interface CollateralEntry extends StoredCollateral {
  readonly source: CollateralSource;
}
