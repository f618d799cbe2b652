/**
 * Jittered exponential backoff (AWS "full jitter"): attempt n waits a uniform random time in
 * [0, min(cap, base * 2^n)], never below `floor`. Replaces the reference's fixed 30 s ticker so
 * a node joins within about a second of a joinservice becoming reachable.
 */
export class Backoff {
  #attempt = 0;

  constructor(
    private readonly baseMs = 200,
    private readonly capMs = 2_000,
    private readonly floorMs = 50,
    private readonly random: () => number = Math.random,
  ) {}

  /** The next delay in milliseconds. */
  next(): number {
    const ceiling = Math.min(this.capMs, this.baseMs * 2 ** Math.min(this.#attempt, 30));
    this.#attempt++;
    return Math.max(this.floorMs, Math.floor(this.random() * ceiling));
  }

  reset(): void {
    this.#attempt = 0;
  }
}

/** Sleeps `ms`, resolving early (with false) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      resolve(false);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
