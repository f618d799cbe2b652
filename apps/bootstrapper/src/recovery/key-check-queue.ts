import { AsterismError } from '@asterism/errors';

/**
 * One key check (a `cryptsetup open --test-passphrase`, seconds of CPU and memory with a real
 * key derivation) at a time per disk, with a bounded queue in front (docs/adr/0029). Without it
 * every Recover call started its own cryptsetup: 400 wrong master secrets from one connection ran
 * 50 at once and the operator's own call could not get through.
 *
 * - A call that finds the queue full is refused at once (`KEY_CHECK_QUEUE_FULL`), never queued.
 * - The last `reserved` places are only for addresses with nothing queued or running, and one
 *   address holds at most `perAddress` places: a flood from one address cannot keep a fresh
 *   address (the operator's) out.
 * - Waiting calls are served round robin by address, so the operator waits behind at most one
 *   check per other address, not behind a flood's whole backlog.
 * - A waiting call whose caller went away (signal) leaves the queue without running.
 */

/** Why a key check was not run. */
export type KeyCheckRefusal = 'KEY_CHECK_QUEUE_FULL' | 'KEY_CHECK_ADDRESS_BUSY' | 'KEY_CHECK_CANCELLED';

/** A key check that was refused before it ran (load, not a verdict about the key). */
export class KeyCheckRefused extends AsterismError<KeyCheckRefusal> {}

/** Limits of a {@link KeyCheckQueue}. */
export interface KeyCheckQueueLimits {
  /** Places in total: the running check and the waiting ones. Default 8. */
  capacity: number;
  /** Of those, places only an address with nothing queued may take. Default 2. */
  reserved: number;
  /** Places one address may hold at once. Default 2. */
  perAddress: number;
  /** Checks that run at once. Default 1 (Infinity only reproduces the old behaviour in tests). */
  concurrent: number;
}

/** Defaults: a flood from one address holds 2 of 8 places; 2 stay for fresh addresses. */
export const DEFAULT_KEY_CHECK_LIMITS: KeyCheckQueueLimits = { capacity: 8, reserved: 2, perAddress: 2, concurrent: 1 };

interface Waiter {
  readonly address: string;
  readonly start: () => void;
}

/** Serialises key checks of one disk; see the module comment. */
export class KeyCheckQueue {
  readonly #limits: KeyCheckQueueLimits;
  /** Waiting calls per address; Map order is the round-robin order. */
  readonly #waiting = new Map<string, Waiter[]>();
  /** Places held per address (waiting or running). */
  readonly #held = new Map<string, number>();
  #size = 0;
  #running = 0;
  #peakRunning = 0;

  constructor(limits: Partial<KeyCheckQueueLimits> = {}) {
    this.#limits = { ...DEFAULT_KEY_CHECK_LIMITS, ...limits };
  }

  /** Places taken now (running plus waiting). */
  get size(): number {
    return this.#size;
  }

  /** The most checks that ever ran at once (1 unless this class is broken). */
  get peakRunning(): number {
    return this.#peakRunning;
  }

  /**
   * Runs `check` for `address` once it is this call's turn; throws {@link KeyCheckRefused} at once
   * when there is no place, or when `signal` aborts while the call waits.
   */
  async run<T>(address: string, check: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    this.#admit(address);
    try {
      await this.#turn(address, signal);
      this.#peakRunning = Math.max(this.#peakRunning, this.#running);
      try {
        return await check();
      } finally {
        this.#running--;
      }
    } finally {
      this.#release(address);
      this.#next();
    }
  }

  #admit(address: string): void {
    const held = this.#held.get(address) ?? 0;
    const { capacity, reserved, perAddress } = this.#limits;
    if (held >= perAddress) throw new KeyCheckRefused('KEY_CHECK_ADDRESS_BUSY', `this address already has ${held} key checks waiting or running; retry when they are done`);
    const free = capacity - this.#size;
    if (free <= 0 || (held > 0 && free <= reserved)) throw new KeyCheckRefused('KEY_CHECK_QUEUE_FULL', 'the key check queue is full; retry in a few seconds');
    this.#held.set(address, held + 1);
    this.#size++;
  }

  #release(address: string): void {
    const held = (this.#held.get(address) ?? 1) - 1;
    if (held === 0) this.#held.delete(address);
    else this.#held.set(address, held);
    this.#size--;
  }

  #turn(address: string, signal?: AbortSignal): Promise<void> {
    if (this.#running < this.#limits.concurrent && this.#waiting.size === 0) {
      this.#running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.#remove(waiter);
        reject(new KeyCheckRefused('KEY_CHECK_CANCELLED', 'the caller went away while its key check waited'));
      };
      const waiter: Waiter = {
        address,
        start: () => (signal?.removeEventListener('abort', onAbort), resolve()),
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      const list = this.#waiting.get(address);
      if (list) list.push(waiter);
      else this.#waiting.set(address, [waiter]);
    });
  }

  #remove(waiter: Waiter): void {
    const list = this.#waiting.get(waiter.address);
    if (!list) return;
    const i = list.indexOf(waiter);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.#waiting.delete(waiter.address);
  }

  // Round robin: the first address in Map order runs its oldest call and goes to the back.
  #next(): void {
    if (this.#running >= this.#limits.concurrent) return;
    const first = this.#waiting.entries().next();
    if (first.done) return;
    const [address, list] = first.value;
    const waiter = list.shift()!;
    this.#waiting.delete(address);
    if (list.length > 0) this.#waiting.set(address, list);
    this.#running++;
    waiter.start();
  }
}
