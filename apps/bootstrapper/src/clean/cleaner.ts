/** Something the cleaner stops once the node's fate is decided (InitServer, JoinClient). */
export interface Stopper {
  stop(): Promise<void> | void;
}

/**
 * Stops the loser of the init/join race (docs/protocol/bootstrapper.md): `clean()` is non-blocking and idempotent
 * (also before `start()`); `start()` waits for the first `clean()` and then stops every stopper
 * concurrently; `done()` resolves when all stoppers have returned.
 */
export class Cleaner {
  readonly #stoppers: Stopper[];
  #cleanRequested!: () => void;
  readonly #requested = new Promise<void>((r) => (this.#cleanRequested = r));
  #started: Promise<void> | undefined;

  constructor(...stoppers: Stopper[]) {
    this.#stoppers = stoppers;
  }

  /** Adds a stopper before start. */
  with(stopper: Stopper): this {
    this.#stoppers.push(stopper);
    return this;
  }

  /** Begins waiting for clean(); safe to call more than once. */
  start(): Promise<void> {
    this.#started ??= this.#requested.then(async () => {
      await Promise.allSettled(this.#stoppers.map(async (s) => s.stop()));
    });
    return this.#started;
  }

  /** Requests the stop of all stoppers. Never blocks. */
  clean(): void {
    this.#cleanRequested();
  }

  /** Resolves when start() finished stopping everything. */
  async done(): Promise<void> {
    await this.start();
  }
}
