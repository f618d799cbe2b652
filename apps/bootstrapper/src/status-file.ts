import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Callers a server of this node refused before they proved anything (docs/adr/0007): aTLS
 * handshakes by refusal reason (plus how many were admitted) and, for the InitServer, init calls
 * refused by the per-address limit on wrong init secrets. The bootstrapper has no metrics endpoint;
 * this is where an operator (or tools/local-cluster) reads them.
 */
export interface ServerRefusals {
  atlsAdmitted: number;
  atlsRefused: Record<string, number>;
  initSecretAttemptsRefused?: number;
  /** Calls refused by the server itself, by reason (the recovery server's limits, docs/adr/0029). */
  callsRefused?: Record<string, number>;
}

/** What a node reports about its bootstrap (read by tools/local-cluster and operators). */
export interface NodeStatus {
  name: string;
  phase: 'starting' | 'waiting' | 'initialized' | 'joined' | 'rejoined' | 'agent-started' | 'failed' | 'stopped';
  variant: string;
  /** Hex of the cluster-ID register after marking. */
  pcr15?: string;
  clusterId?: string;
  /** Milliseconds from process start to the end of the bootstrap. */
  bootstrapMs?: number;
  /**
   * When the JoinClient's readiness probe first saw a joinservice (ISO time): the start of the
   * join-time measurement "joinservice reachable -> Node Ready" (docs/adr/0019-node-runtime.md).
   */
  joinServiceReachableAt?: string;
  error?: string;
  /** Refusals per server that has run in this process (`initServer`, `recoveryServer`). */
  refusals?: Record<string, ServerRefusals>;
  updatedAt: string;
}

/** Writes the status JSON atomically (rename), so readers never see half a file. */
export async function writeStatusFile(path: string, status: Omit<NodeStatus, 'updatedAt'>): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, `${JSON.stringify({ ...status, updatedAt: new Date().toISOString() }, null, 2)}\n`, { mode: 0o644 });
  await rename(tmp, path);
}

/** Counters of one server: its aTLS credentials and, for the InitServer, the wrong-secret limit. */
export interface RefusalSource {
  readonly atls: { readonly admitted: number; readonly refusals: Readonly<Record<string, number>> };
  readonly initSecretAttemptsRefused?: () => number;
  readonly callsRefused?: () => Readonly<Record<string, number>>;
}

/** The phase and timings part of the status, as the boot stages report it. */
export type StatusUpdate = Omit<NodeStatus, 'name' | 'variant' | 'updatedAt' | 'refusals'>;

/** Fields that, once reported, stay in every later write of the same process (milestones of this boot). */
const MILESTONES = ['joinServiceReachableAt'] as const;

/**
 * The node's status file: every update writes the phase, the milestones reported so far and the
 * current refusal counters of the servers registered so far, and {@link startRefreshing} rewrites
 * it while the node waits, so refusals show up without a phase change. Writes run one after the
 * other in call order (a later phase is never overwritten by an earlier one). Write failures go to
 * `onError` (a status file is a report, never a reason to stop bootstrapping).
 */
export class NodeStatusFile {
  readonly #sources = new Map<string, RefusalSource>();
  #last: StatusUpdate = { phase: 'starting' };
  readonly #kept: Partial<StatusUpdate> = {};
  #written = '';
  #timer: NodeJS.Timeout | undefined;
  #queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly path: string,
    private readonly node: { name: string; variant: string },
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Writes a new phase (and the counters as they are now). */
  async update(status: StatusUpdate): Promise<void> {
    for (const k of MILESTONES) if (status[k] !== undefined) this.#kept[k] = status[k];
    this.#last = { ...this.#kept, ...status };
    await this.#write();
  }

  /** Includes the counters of `source` under `name` from now on. */
  addRefusalSource(name: string, source: RefusalSource): void {
    this.#sources.set(name, source);
  }

  /** The counters of every registered server. */
  refusals(): Record<string, ServerRefusals> {
    const out: Record<string, ServerRefusals> = {};
    for (const [name, s] of this.#sources) {
      out[name] = { atlsAdmitted: s.atls.admitted, atlsRefused: { ...s.atls.refusals }, ...(s.initSecretAttemptsRefused ? { initSecretAttemptsRefused: s.initSecretAttemptsRefused() } : {}), ...(s.callsRefused ? { callsRefused: { ...s.callsRefused() } } : {}) };
    }
    return out;
  }

  /** Rewrites the file when a counter changed since the last write. */
  async refresh(): Promise<void> {
    if (JSON.stringify(this.refusals()) !== this.#written) await this.#write();
  }

  /** Refreshes every `intervalMs` until {@link stopRefreshing} (the timer does not keep the process alive). */
  startRefreshing(intervalMs = 10_000): void {
    this.stopRefreshing();
    this.#timer = setInterval(() => void this.refresh(), intervalMs);
    this.#timer.unref();
  }

  /** Stops the periodic refresh. */
  stopRefreshing(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #write(): Promise<void> {
    const refusals = this.refusals();
    this.#written = JSON.stringify(refusals);
    const status = { ...this.node, ...this.#last, ...(this.#sources.size > 0 ? { refusals } : {}) };
    this.#queue = this.#queue.then(() => writeStatusFile(this.path, status).catch(this.onError));
    return this.#queue;
  }
}
