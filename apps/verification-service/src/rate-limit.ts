import { PeerRateLimiter, RefusalLog, type RefusalLogSink } from '@asterism/service-runtime';

/**
 * Per-address rate limit of the verification service (docs/adr/0029): every document is a TPM
 * quote (or a hardware report), so one client asking as fast as it can (65 quotes/s were measured)
 * must not take the node's TPM and CPU from everyone else. A token bucket per client IP shared by
 * the gRPC and the HTTP endpoint; refusals are logged aggregated (one line per interval).
 */
export class VerifyRateLimit {
  readonly #limiter: PeerRateLimiter;
  readonly #log: RefusalLog;

  constructor(sink: RefusalLogSink, limiter: PeerRateLimiter = new PeerRateLimiter(VERIFY_RATE.perSecond, VERIFY_RATE.burst)) {
    this.#limiter = limiter;
    this.#log = new RefusalLog(sink, 'verification request refused');
  }

  /** Undefined when `peer` (a grpc-js peer string or an IP) may have a document now; otherwise the seconds to wait. */
  refuse(peer: string): number | undefined {
    if (this.#limiter.take(peer)) return undefined;
    this.#log.refused('ADDRESS_RATE', { peer });
    return Math.max(1, this.#limiter.retryAfterSeconds(peer));
  }

  /** Refusals so far, by reason (for reports and metrics). */
  get refusals(): Readonly<Record<string, number>> {
    return this.#log.totals;
  }
}

/** Default: 10 documents at once per client address, then 5 per second (a `verify` needs one). */
export const VERIFY_RATE = { perSecond: 5, burst: 10 } as const;
