import { randomUUID } from 'node:crypto';
import { deriveClusterId } from '@asterism/crypto';
import type { Logger } from '@asterism/logger';
import type { MetadataProvider } from '@asterism/metadata';
import type { NodeLock } from '@asterism/nodelock';
import { Backoff, sleep } from './backoff.js';
import { joinServiceEndpoints } from './endpoints.js';
import { JoinClientError } from './join-client.js';
import type { JoinServiceDialer } from './ports.js';
import { waitForReachable, type ReachableOptions, type ReadinessProbe } from './readiness-probe.js';

/** The state disk as the rejoin needs it: its UUID and a check that a key opens it. */
export interface RejoinDisk {
  uuid(): Promise<string>;
  testPassphrase(passphrase: Uint8Array): Promise<boolean>;
}

/** Everything the rejoin is built from. */
export interface RejoinDeps {
  dialer: JoinServiceDialer;
  /** Whether a joinservice listens (instead of sleeping blindly until one does). */
  probe: ReadinessProbe;
  metadata: MetadataProvider;
  disk: RejoinDisk;
  lock: NodeLock;
  /**
   * Opens the node's state with the disk key the ticket carries (maps and mounts a mapped state
   * disk, docs/adr/0041) and resolves the measurement salt of the node state written at the first join.
   */
  openState(diskKey: Uint8Array): Promise<Buffer>;
  logger: Logger;
}

/**
 * Rejoin of an already initialised node after a reboot (the reference's disk-mapper rejoin
 * client, done here): IssueRejoinTicket until a joinservice answers, check that the returned key
 * opens the state disk, open the node state with it, re-derive the cluster ID from the measurement
 * secret and the stored salt, and mark the node (PCR 15) again. Returns the cluster ID.
 */
export class RejoinClient {
  readonly #stop = new AbortController();

  constructor(
    private readonly deps: RejoinDeps,
    private readonly options: { joinServicePort?: number; rpcTimeoutMs?: number; backoff?: Backoff; selfIp?: string; reachable?: ReachableOptions } = {},
  ) {}

  stop(): void {
    this.#stop.abort();
  }

  async run(): Promise<Buffer | 'stopped'> {
    const d = this.deps;
    const diskUuid = await d.disk.uuid().catch((err: unknown) => {
      throw new JoinClientError('DISK_UNAVAILABLE', `reading state disk UUID: ${(err as Error).message}`, { cause: err });
    });
    const backoff = this.options.backoff ?? new Backoff();
    const signal = this.#stop.signal;
    const list = () => joinServiceEndpoints(d.metadata, this.options.joinServicePort ?? 30090, d.logger, { signal, ...(this.options.selfIp ? { exclude: this.options.selfIp } : {}) });
    for (;;) {
      // Probe (cheap, jittered) until a joinservice listens; back off only after one answered without a ticket.
      const endpoints = await waitForReachable(list, d.probe, signal, this.options.reachable);
      if (!endpoints) return 'stopped';
      for (const endpoint of endpoints) {
        const joinId = randomUUID();
        try {
          const ticket = await d.dialer.issueRejoinTicket(endpoint, { diskUuid }, { joinId, signal: AbortSignal.any([AbortSignal.timeout(this.options.rpcTimeoutMs ?? 30_000), signal]) });
          if (!(await d.disk.testPassphrase(ticket.stateDiskKey))) {
            // A key that does not open our disk means a different cluster or master secret: never retry into it.
            throw new JoinClientError('TICKET_INVALID', `the rejoin ticket from ${endpoint} carries a disk key that does not open this node's state disk`);
          }
          const clusterId = deriveClusterId(ticket.measurementSecret, await d.openState(ticket.stateDiskKey));
          const lock = await d.lock.tryLockOnce(clusterId, 'rejoin');
          d.logger.info('rejoined', { endpoint, joinId, clusterId: clusterId.toString('hex'), lock });
          return clusterId;
        } catch (err) {
          if (err instanceof JoinClientError) throw err;
          if (signal.aborted) return 'stopped';
          d.logger.warn('rejoin ticket request failed', { endpoint, joinId, err });
        }
      }
      if (!(await sleep(backoff.next(), signal))) return 'stopped';
    }
  }
}
