import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

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
  updatedAt: string;
}

/** Writes the status JSON atomically (rename), so readers never see half a file. */
export async function writeStatusFile(path: string, status: Omit<NodeStatus, 'updatedAt'>): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, `${JSON.stringify({ ...status, updatedAt: new Date().toISOString() }, null, 2)}\n`, { mode: 0o644 });
  await rename(tmp, path);
}

/** One status update: the phase and what goes with it. */
export type StatusUpdate = Omit<NodeStatus, 'name' | 'variant' | 'updatedAt'>;

/** Fields that, once reported, stay in every later write of the same process (milestones of this boot). */
const MILESTONES = ['joinServiceReachableAt'] as const;

/**
 * A status writer for one bootstrapper process: every update rewrites the file with the node's
 * name and variant, the milestones reported so far and the update itself. Writes run one after
 * the other in call order (a later phase is never overwritten by an earlier one). Write failures
 * go to `onError` (a status file is a report, never a reason to stop bootstrapping).
 */
export function statusWriter(path: string, base: Pick<NodeStatus, 'name' | 'variant'>, onError: (err: unknown) => void): (s: StatusUpdate) => Promise<void> {
  const kept: Partial<StatusUpdate> = {};
  let last: Promise<void> = Promise.resolve();
  return (s) => {
    for (const k of MILESTONES) if (s[k] !== undefined) kept[k] = s[k];
    const status = { ...base, ...kept, ...s };
    last = last.then(() => writeStatusFile(path, status).catch(onError));
    return last;
  };
}
