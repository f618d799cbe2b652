/**
 * Variant-neutral collateral cache (docs/collateral.md): verified vendor collateral kept in
 * memory and a persistence port, offline mode, deadline-bounded and rate-limited fetches with
 * background retries, hit/miss/failure metrics. Variants supply the fetcher and the verifier.
 */
export { CollateralView } from './view.js';
export { CollateralCache, type CollateralCacheOptions, type CollateralEntry, type CollateralSource } from './cache.js';
export { CollateralError, CollateralFetchError, type CollateralErrorCode } from './errors.js';
export { MemoryCollateralStore } from './memory-store.js';
export {
  NOP_COLLATERAL_METRICS,
  type CollateralFetcher,
  type CollateralFetchOutcome,
  type CollateralLookupOutcome,
  type CollateralMetrics,
  type CollateralStore,
  type CollateralVerifier,
  type StoredCollateral,
  type VerifiedCollateral,
} from './ports.js';
export { httpCollateralFetcher, parseRetryAfter, type HttpCollateralFetcherOptions } from './http-fetcher.js';
export { TokenBucket } from './rate-limiter.js';
export { backoffDelay, DEFAULT_RETRY_POLICY, isTransient, type RetryPolicy } from './retry-state.js';
export { certificateRefreshAt, CERTIFICATE_REFRESH_LEAD_MS, signedDataRefreshAt, SIGNED_DATA_REFRESH_LEAD_MS } from './refresh.js';
