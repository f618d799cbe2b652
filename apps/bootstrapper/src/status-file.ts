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
