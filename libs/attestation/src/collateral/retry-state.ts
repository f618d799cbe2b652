/**
 * Per-key failure bookkeeping of the collateral cache: exponential backoff with jitter after a
 * failed fetch, honouring the remote service's Retry-After, and a bounded number of keys so that
 * evidence naming arbitrary keys cannot grow it without limit.
 */
import { CollateralFetchError } from './errors.js';

/** Backoff settings of background retries. */
export interface RetryPolicy {
  /** Delay before the first retry (default 2 s). */
  readonly initialDelayMs: number;
  /** Cap of the delay (default 5 min). */
  readonly maxDelayMs: number;
  /** Background retries after one failure before the cache waits for demand again (default 6). */
  readonly maxAttempts: number;
  /** Keys with failure state kept at most (oldest dropped first; default 256). */
  readonly maxKeys: number;
}

/** The defaults: 2 s, 4 s, 8 s, ... capped at 5 min, six background attempts. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { initialDelayMs: 2_000, maxDelayMs: 300_000, maxAttempts: 6, maxKeys: 256 };

/** Failure state of one key. */
export interface FailureState {
  /** Failures so far (1 after the first). */
  failures: number;
  /** No demand-driven fetch before this instant (ms since the epoch). */
  notBefore: number;
  /** Why the last attempt failed. */
  lastError: string;
  /** Pending background retry, if any. */
  timer: NodeJS.Timeout | undefined;
}

/**
 * Whether a failure is worth retrying in the background: network errors, timeouts, 408, 429 and
 * 5xx are; other 4xx answers (e.g. 404 for a key the service does not know) are not, they only
 * hold off demand-driven fetches for the maximum delay.
 */
export function isTransient(err: unknown): boolean {
  const status = err instanceof CollateralFetchError ? err.status : undefined;
  if (status === undefined) return true;
  return status === 408 || status === 429 || status >= 500;
}

/** Delay before retry number `failures` (1-based), with ±20 % jitter, at least `retryAfterMs`. */
export function backoffDelay(policy: RetryPolicy, failures: number, err: unknown, random: () => number = Math.random): number {
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.max(0, failures - 1));
  const jittered = Math.min(policy.maxDelayMs, Math.round(base * (0.8 + 0.4 * random())));
  const retryAfter = err instanceof CollateralFetchError ? (err.retryAfterMs ?? 0) : 0;
  return Math.max(jittered, Math.min(retryAfter, policy.maxDelayMs));
}

/** The failure states of one cache, bounded to `policy.maxKeys` (insertion order = age). */
export class FailureTable {
  readonly #states = new Map<string, FailureState>();

  constructor(private readonly policy: RetryPolicy) {}

  get(key: string): FailureState | undefined {
    return this.#states.get(key);
  }

  /**
   * Records a failure and returns the state; `retryIn` is the delay of the next background
   * retry, or undefined when none should run (permanent error, attempts used up).
   */
  record(key: string, err: unknown, now: number): { state: FailureState; retryIn: number | undefined } {
    const previous = this.#states.get(key);
    if (previous) this.#states.delete(key);
    const failures = (previous?.failures ?? 0) + 1;
    if (previous?.timer) clearTimeout(previous.timer);
    const transient = isTransient(err);
    const delay = transient ? backoffDelay(this.policy, failures, err) : this.policy.maxDelayMs;
    const state: FailureState = { failures, notBefore: now + delay, lastError: err instanceof Error ? err.message : String(err), timer: undefined };
    this.#states.set(key, state);
    while (this.#states.size > this.policy.maxKeys) {
      const [oldest, s] = this.#states.entries().next().value as [string, FailureState];
      if (s.timer) clearTimeout(s.timer);
      this.#states.delete(oldest);
    }
    return { state, retryIn: transient && failures <= this.policy.maxAttempts ? delay : undefined };
  }

  /** Forgets a key (it succeeded). */
  clear(key: string): void {
    const s = this.#states.get(key);
    if (s?.timer) clearTimeout(s.timer);
    this.#states.delete(key);
  }

  /** Stops every pending retry. */
  clearAll(): void {
    for (const key of [...this.#states.keys()]) this.clear(key);
  }

  /** Keys with a failure state (tests, diagnostics). */
  get size(): number {
    return this.#states.size;
  }
}
