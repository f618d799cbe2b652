/**
 * Drives the monitor: renews the Lease every `retryMs`; while this replica leads, runs a round at
 * once and then every interval ± jitter (spread, so replicas of many clusters and the nodes'
 * TPMs are not hit in lockstep). A failed round is logged and counted; the next one runs as usual.
 */
import type { Logger } from '@asterism/logger';
import type { MonitorMetrics } from '@asterism/node-attestation';

/** The Lease side. */
export interface Elector {
  tryAcquireOrRenew(): Promise<boolean>;
  release(): Promise<void>;
}

/** The round side. */
export interface Rounds {
  round(): Promise<unknown>;
}

/** Loop timing. */
export interface LoopTiming {
  intervalMs: number;
  jitter: number;
  retryMs: number;
}

/** The next delay: interval * (1 ± jitter), uniformly. */
export function jitteredDelay(intervalMs: number, jitter: number, random: () => number = Math.random): number {
  return Math.round(intervalMs * (1 + jitter * (2 * random() - 1)));
}

/** Election + rounds, until stopped. */
export class MonitorLoop {
  #electionTimer: NodeJS.Timeout | undefined;
  #roundTimer: NodeJS.Timeout | undefined;
  #leading = false;
  #round: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(
    private readonly elector: Elector,
    private readonly rounds: Rounds,
    private readonly metrics: MonitorMetrics,
    private readonly logger: Logger,
    private readonly timing: LoopTiming,
    private readonly random: () => number = Math.random,
  ) {}

  /** Starts electing (and, when leading, checking). */
  start(): void {
    void this.#elect();
  }

  async #elect(): Promise<void> {
    if (this.#stopped) return;
    const leading = await this.elector.tryAcquireOrRenew();
    if (leading !== this.#leading) {
      this.#leading = leading;
      this.metrics.leader.set(leading ? 1 : 0);
      this.logger.info(leading ? 'leading: checking nodes' : 'not leading: standing by');
      clearTimeout(this.#roundTimer);
      if (leading) this.#schedule(0);
    }
    if (!this.#stopped) this.#electionTimer = setTimeout(() => void this.#elect(), this.timing.retryMs);
  }

  #schedule(delayMs: number): void {
    this.#roundTimer = setTimeout(() => {
      this.#round = this.#runRound();
    }, delayMs);
  }

  async #runRound(): Promise<void> {
    if (!this.#leading || this.#stopped) return;
    try {
      await this.rounds.round();
    } catch (err) {
      this.logger.error('round failed', { err });
      this.metrics.roundFailures.inc({ stage: 'round' });
    }
    if (this.#leading && !this.#stopped) this.#schedule(jitteredDelay(this.timing.intervalMs, this.timing.jitter, this.random));
  }

  /** Stops both timers, waits for a running round, gives the Lease up. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#electionTimer);
    clearTimeout(this.#roundTimer);
    await this.#round;
    await this.elector.release();
    this.metrics.leader.set(0);
  }
}
