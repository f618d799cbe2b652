/**
 * A token bucket towards one remote service, shared by every cache that talks to it. Unlike a
 * request limiter that refuses, callers wait for a token until their signal aborts: the remote
 * service sees at most `burst` requests at once and `ratePerSecond` on average.
 */
export class TokenBucket {
  #tokens: number;
  #last: number;
  #waiters: Array<{ resolve: () => void; reject: (err: unknown) => void; signal: AbortSignal | undefined; onAbort: () => void }> = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!(ratePerSecond > 0) || !(burst >= 1)) throw new RangeError(`invalid token bucket: rate ${ratePerSecond}/s, burst ${burst}`);
    this.#tokens = burst;
    this.#last = now();
  }

  /** Takes a token if one is available right now. */
  tryTake(): boolean {
    this.refill();
    if (this.#waiters.length > 0 || this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Waits for a token (first come, first served); rejects with the signal's reason on abort. */
  take(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.tryTake()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          this.#waiters = this.#waiters.filter((w) => w !== waiter);
          reject(signal!.reason);
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.#waiters.push(waiter);
      this.schedule();
    });
  }

  private refill(): void {
    const t = this.now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((t - this.#last) / 1000) * this.ratePerSecond);
    this.#last = t;
  }

  private schedule(): void {
    if (this.#timer || this.#waiters.length === 0) return;
    this.refill();
    const waitMs = Math.max(0, Math.ceil(((1 - this.#tokens) / this.ratePerSecond) * 1000));
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.refill();
      while (this.#waiters.length > 0 && this.#tokens >= 1) {
        const w = this.#waiters.shift()!;
        this.#tokens -= 1;
        w.signal?.removeEventListener('abort', w.onAbort);
        w.resolve();
      }
      this.schedule();
    }, waitMs);
  }
}
