/**
 * Token bucket per peer host: `burst` requests at once, refilled at `perSecond`. Bounded:
 * at most `maxPeers` buckets are kept (least recently used ones are dropped).
 */
export class PeerRateLimiter {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly maxPeers = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes one token for `peer` (host:port or host); false when the peer is over its budget. */
  take(peer: string): boolean {
    if (this.perSecond <= 0) return true;
    const host = peerHost(peer);
    const t = this.now();
    const b = this.#buckets.get(host) ?? { tokens: this.burst, at: t };
    this.#buckets.delete(host);
    b.tokens = Math.min(this.burst, b.tokens + ((t - b.at) / 1000) * this.perSecond);
    b.at = t;
    const ok = b.tokens >= 1;
    if (ok) b.tokens -= 1;
    this.#buckets.set(host, b);
    if (this.#buckets.size > this.maxPeers) this.#buckets.delete(this.#buckets.keys().next().value as string);
    return ok;
  }

  /** Gives back the token of a request that turned out not to count (e.g. a correct secret). */
  refund(peer: string): void {
    const b = this.#buckets.get(peerHost(peer));
    if (b) b.tokens = Math.min(this.burst, b.tokens + 1);
  }

  /** Seconds until `peer` has a token again (0 when it has one now). */
  retryAfterSeconds(peer: string): number {
    const b = this.#buckets.get(peerHost(peer));
    if (!b || this.perSecond <= 0) return 0;
    const tokens = Math.min(this.burst, b.tokens + ((this.now() - b.at) / 1000) * this.perSecond);
    return tokens >= 1 ? 0 : Math.ceil((1 - tokens) / this.perSecond);
  }

  /** Number of peers tracked. */
  get size(): number {
    return this.#buckets.size;
  }
}

/** The host part of a grpc-js peer string (`1.2.3.4:5`, `[::1]:5`, `ipv6:...`). */
export function peerHost(peer: string): string {
  const m = /^\[(.*)\]:\d+$/.exec(peer) ?? /^(.*):\d+$/.exec(peer);
  return m ? m[1]! : peer;
}
