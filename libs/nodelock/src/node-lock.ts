import { AsterismError } from '@asterism/errors';

/** Marks the node as bootstrapped for a cluster (TPM: PCR 15 extended with the cluster ID). */
export interface NodeMarker {
  markNodeAsBootstrapped(clusterId: Uint8Array): Promise<void>;
}

/** Marking the node failed after the lock was taken; the lock stays taken. */
export class NodeLockError extends AsterismError<'MARK_FAILED'> {}

/** Outcome of a lock attempt. */
export type LockResult = 'acquired' | 'already-locked';

/**
 * A one-way lock shared by the InitServer and the JoinClient (docs/protocol/node-lock.md): the first caller
 * wins, forever. The state flips synchronously, before any await, so concurrent async callers
 * can never both win. The winner then marks the node; if marking fails the lock is still held
 * (a half-marked node must not be bootstrapped by the other flow) and NodeLockError is thrown.
 */
export class NodeLock {
  #locked = false;
  #owner: string | undefined;

  constructor(private readonly marker: NodeMarker) {}

  /** Tries to take the lock for `clusterId`; the loser never touches the TPM. */
  async tryLockOnce(clusterId: Uint8Array, owner = 'unknown'): Promise<LockResult> {
    if (this.#locked) return 'already-locked';
    this.#locked = true;
    this.#owner = owner;
    try {
      await this.marker.markNodeAsBootstrapped(clusterId);
    } catch (err) {
      throw new NodeLockError('MARK_FAILED', `marking node as bootstrapped: ${(err as Error).message}`, { cause: err, details: { owner } });
    }
    return 'acquired';
  }

  /** Whether some flow already took the lock. */
  get locked(): boolean {
    return this.#locked;
  }

  /** Who took the lock (e.g. `init` or `join`), for logs. */
  get owner(): string | undefined {
    return this.#owner;
  }
}

/**
 * Whether a cluster-ID register value (PCR 15, RTMR2) says "marked in this boot": any non-zero
 * byte. Registers start all zero at boot and only an extend changes them. The one home of that rule.
 */
export function isMarkedValue(value: Uint8Array): boolean {
  return value.some((b) => b !== 0);
}
