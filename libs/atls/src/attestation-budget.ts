import { AtlsError } from './errors.js';

/**
 * A global budget for the attestation work of one aTLS server (docs/adr/0029), on top of the
 * per-address admission (address-admission.ts): per-address limits cannot stop a flood spread
 * over many addresses (50 addresses reached 330 validations/s and a full core). Two pools:
 *
 * - `handshakes`: every admitted handshake's certificate work (a key, a certificate, for a
 *   server that attests an attestation document over the client's nonce) and the TLS key exchange
 *   that follows it;
 * - `validations`: every client attestation the server checks (client-attested servers).
 *
 * Each pool starts at most `perSecond` jobs per second (token bucket with `burst`) and runs at
 * most `concurrent` at once; so the CPU it can take is bounded by `perSecond` times the cost of a
 * job, whatever the number of addresses. Jobs beyond that wait in a bounded queue (one job per
 * address at a time) served least recently served address first: an address the pool has not
 * served lately (the operator's, a joining node's) goes before every address of a flood; a job
 * that finds no place, or waits longer than `maxWaitMs`, is refused at once with
 * `ATTESTATION_BUDGET` (retryable) and a reason.
 */

/** Why the budget refused a job. */
export type BudgetRefusalReason = 'BUDGET_QUEUE_FULL' | 'BUDGET_ADDRESS_QUEUED' | 'BUDGET_QUEUE_TIMEOUT';

/** Limits of one pool. */
export interface BudgetPoolLimits {
  /** Jobs started per second (all addresses) and the burst. */
  perSecond: number;
  burst: number;
  /** Jobs running at once. */
  concurrent: number;
  /** Jobs waiting in total, and per address. */
  queue: number;
  queuePerAddress: number;
  /** A job that waited this long is refused (it would meet its peer's deadline anyway). */
  maxWaitMs: number;
}

/** Limits of both pools. */
export interface AttestationBudgetLimits {
  handshakes: BudgetPoolLimits;
  validations: BudgetPoolLimits;
}

/**
 * Defaults (measured in libs/atls/src/attestation-budget.int.spec.ts, docs/adr/0029): 100
 * handshakes/s and 50 validations/s per server, far above a cluster's joins (a node joins with one
 * handshake and one validation) and a small share of a core on the measured machine.
 */
export const DEFAULT_BUDGET_LIMITS: AttestationBudgetLimits = {
  handshakes: { perSecond: 100, burst: 100, concurrent: 64, queue: 128, queuePerAddress: 1, maxWaitMs: 3_000 },
  validations: { perSecond: 50, burst: 50, concurrent: 8, queue: 128, queuePerAddress: 1, maxWaitMs: 10_000 },
};

interface Waiter {
  readonly address: string;
  readonly since: number;
  readonly start: () => void;
  readonly refuse: (reason: BudgetRefusalReason) => void;
}

/** Addresses whose last service time a pool remembers (least recently used forgotten first). */
const SERVED_MEMORY = 10_000;

/** One pool: token bucket, concurrency cap and a bounded queue, least recently served address first. */
export class BudgetPool {
  readonly #queue = new Map<string, Waiter[]>();
  /** When each address last had a job started (Map order: oldest first). */
  readonly #served = new Map<string, number>();
  #queued = 0;
  #running = 0;
  #tokens: number;
  #at: number;
  #timer: NodeJS.Timeout | undefined;
  #started = 0;

  constructor(
    readonly name: 'handshakes' | 'validations',
    private readonly limits: BudgetPoolLimits,
    private readonly onRefused: (reason: BudgetRefusalReason) => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.#tokens = limits.burst;
    this.#at = now();
  }

  /** Jobs started so far. */
  get started(): number {
    return this.#started;
  }

  /** Jobs waiting now. */
  get queued(): number {
    return this.#queued;
  }

  /** Runs `job` for `address` within the budget, or throws AtlsError ATTESTATION_BUDGET. */
  async run<T>(address: string, job: () => Promise<T>): Promise<T> {
    await this.#acquire(address);
    this.#markServed(address);
    try {
      return await job();
    } finally {
      this.#running--;
      this.#dispatch();
    }
  }

  #acquire(address: string): Promise<void> {
    if (this.#queued === 0 && this.#take()) return Promise.resolve();
    const mine = this.#queue.get(address);
    const reason: BudgetRefusalReason | undefined = this.#queued >= this.limits.queue ? 'BUDGET_QUEUE_FULL' : (mine?.length ?? 0) >= this.limits.queuePerAddress ? 'BUDGET_ADDRESS_QUEUED' : undefined;
    if (reason) return Promise.reject(this.#refusal(reason));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { address, since: this.now(), start: resolve, refuse: (r) => reject(this.#refusal(r)) };
      if (mine) mine.push(waiter);
      else this.#queue.set(address, [waiter]);
      this.#queued++;
      this.#dispatch();
    });
  }

  // Takes a slot and a token when both are free.
  #take(): boolean {
    const t = this.now();
    this.#tokens = Math.min(this.limits.burst, this.#tokens + ((t - this.#at) / 1000) * this.limits.perSecond);
    this.#at = t;
    if (this.#running >= this.limits.concurrent || this.#tokens < 1) return false;
    this.#tokens--;
    this.#running++;
    this.#started++;
    return true;
  }

  #markServed(address: string): void {
    this.#served.delete(address);
    this.#served.set(address, this.now());
    if (this.#served.size > SERVED_MEMORY) this.#served.delete(this.#served.keys().next().value as string);
  }

  // The waiting address served least recently (never served: first).
  #pick(): string {
    let best = '';
    let bestAt = Infinity;
    for (const address of this.#queue.keys()) {
      const at = this.#served.get(address) ?? -Infinity;
      if (at < bestAt || best === '') [best, bestAt] = [address, at];
    }
    return best;
  }

  // Starts waiting jobs while the budget allows; refuses those that waited too long.
  #dispatch(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#expire();
    while (this.#queued > 0 && this.#take()) {
      const address = this.#pick();
      const list = this.#queue.get(address)!;
      const w = list.shift()!;
      if (list.length === 0) this.#queue.delete(address);
      this.#queued--;
      this.#markServed(address);
      w.start();
    }
    // Waiting for a token, or for the oldest waiter's time to run out (a finishing job also dispatches).
    if (this.#queued > 0) {
      const tokenMs = this.#running < this.limits.concurrent ? Math.ceil(((1 - this.#tokens) / this.limits.perSecond) * 1000) : this.limits.maxWaitMs;
      this.#timer = setTimeout(() => this.#dispatch(), Math.max(1, Math.min(tokenMs, this.limits.maxWaitMs)));
      this.#timer.unref();
    }
  }

  #expire(): void {
    const oldest = this.now() - this.limits.maxWaitMs;
    for (const [address, list] of this.#queue) {
      const keep = list.filter((w) => w.since > oldest);
      for (const w of list) if (w.since <= oldest) w.refuse('BUDGET_QUEUE_TIMEOUT');
      this.#queued -= list.length - keep.length;
      if (keep.length === 0) this.#queue.delete(address);
      else this.#queue.set(address, keep);
    }
  }

  #refusal(reason: BudgetRefusalReason): AtlsError {
    this.onRefused(reason);
    return new AtlsError('ATTESTATION_BUDGET', `${this.name}: ${reason === 'BUDGET_QUEUE_TIMEOUT' ? `waited more than ${this.limits.maxWaitMs} ms for the attestation budget` : 'the attestation budget is exhausted'} (${reason}); retry later`, { details: { reason, pool: this.name } });
  }
}

/** The budget of one aTLS server (or several, when shared); see the module comment. */
export class AttestationBudget {
  readonly handshakes: BudgetPool;
  readonly validations: BudgetPool;

  constructor(limits: { handshakes?: Partial<BudgetPoolLimits>; validations?: Partial<BudgetPoolLimits> } = {}, onRefused?: (reason: BudgetRefusalReason) => void) {
    this.handshakes = new BudgetPool('handshakes', { ...DEFAULT_BUDGET_LIMITS.handshakes, ...limits.handshakes }, onRefused);
    this.validations = new BudgetPool('validations', { ...DEFAULT_BUDGET_LIMITS.validations, ...limits.validations }, onRefused);
  }
}
