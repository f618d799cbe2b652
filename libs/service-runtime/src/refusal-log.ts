/**
 * Log lines for refusals that a flood can cause (wrong secrets, rate limits, attestation budget,
 * rejected peers): without aggregation every refused caller is a log line, so a flood grows the
 * node's log without bound (docs/adr/0029). A {@link RefusalLog} writes the first refusal (or first few) of a
 * reason in an interval as it comes (with its fields, e.g. the peer), counts the rest, and at the
 * end of the interval writes one summary line per reason with how many it did not write. So a
 * flood costs at most two lines per reason and interval, whatever its rate; the totals per reason
 * stay available for metrics and status files.
 */

/** What a refusal log writes to (a project logger or an attestation logger). */
export interface RefusalLogSink {
  warn(msg: string, fields?: Record<string, unknown>): void;
}

/** Options of {@link RefusalLog}. */
export interface RefusalLogOptions {
  /** Length of an interval. Default 10 s. */
  intervalMs?: number;
  /** Refusals of a reason written as their own line per interval before the rest is only counted. Default 1. */
  linesPerInterval?: number;
  /** Injected clock (tests). */
  now?: () => number;
}

interface ReasonState {
  total: number;
  /** Start of the interval whose first refusal was written. */
  windowStart: number;
  /** Refusals in that interval written as their own line, and the rest. */
  written: number;
  suppressed: number;
}

/** Aggregated, bounded logging of refusals, with totals per reason. */
export class RefusalLog {
  readonly #reasons = new Map<string, ReasonState>();
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #lines: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly sink: RefusalLogSink,
    private readonly message: string,
    options: RefusalLogOptions = {},
  ) {
    this.#intervalMs = options.intervalMs ?? 10_000;
    this.#now = options.now ?? Date.now;
    this.#lines = options.linesPerInterval ?? 1;
  }

  /** Counts one refusal for `reason`; writes it only when it is the first of its interval. */
  refused(reason: string, fields: Record<string, unknown> = {}): void {
    const t = this.#now();
    let s = this.#reasons.get(reason);
    if (!s) this.#reasons.set(reason, (s = { total: 0, windowStart: -Infinity, written: 0, suppressed: 0 }));
    if (t - s.windowStart >= this.#intervalMs) {
      this.#summarise(reason, s);
      s.windowStart = t;
      s.written = 0;
    }
    if (s.written < this.#lines) {
      s.total++;
      s.written++;
      this.sink.warn(this.message, { reason, ...fields, refusedSoFar: s.total });
      return;
    }
    s.total++;
    s.suppressed++;
    this.#schedule();
  }

  /** Refusals so far, by reason (for metrics and status files). */
  get totals(): Readonly<Record<string, number>> {
    return Object.fromEntries([...this.#reasons].map(([r, s]) => [r, s.total]));
  }

  /** Writes the pending summaries now (end of an interval, or shutdown). */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const [reason, s] of this.#reasons) this.#summarise(reason, s);
  }

  #summarise(reason: string, s: ReasonState): void {
    if (s.suppressed === 0) return;
    this.sink.warn(`${this.message} (summary)`, { reason, notLoggedSeparately: s.suppressed, intervalMs: this.#intervalMs, refusedSoFar: s.total });
    s.suppressed = 0;
  }

  // One timer for every reason; it does not keep the process alive.
  #schedule(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => this.flush(), this.#intervalMs);
    this.#timer.unref();
  }
}
