import { AsterismError } from '@asterism/errors';

/**
 * Why collateral (certificates, signed TCB data, ... that evidence is checked against) could not
 * be produced for a key:
 * - `COLLATERAL_UNAVAILABLE`: not cached and the remote service failed, timed out, is backing
 *   off after failures, is rate limited, or the cache is offline;
 * - `COLLATERAL_INVALID`: the remote service answered, but the answer did not verify against the
 *   configured trust anchor (it is neither cached nor persisted).
 */
export type CollateralErrorCode = 'COLLATERAL_UNAVAILABLE' | 'COLLATERAL_INVALID';

/** A collateral lookup failed; `details` names the cache, the key and the reason. */
export class CollateralError extends AsterismError<CollateralErrorCode> {}

/**
 * A remote fetch failure that says when to try again (e.g. HTTP 429 or 503 with Retry-After).
 * Fetchers may throw it; the cache's background retry waits at least `retryAfterMs`.
 */
export class CollateralFetchError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'CollateralFetchError';
  }
}
