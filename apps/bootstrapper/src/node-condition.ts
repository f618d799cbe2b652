import { access } from 'node:fs/promises';
import { isMarkedValue } from '@asterism/nodelock';
import type { NodeCondition } from './run.js';

/** Reads the cluster-ID register (PCR 15 on a vTPM). */
export interface MarkReader {
  /** The current value; all zero = not marked in this boot. */
  readMark(): Promise<Buffer>;
}

/** The state disk's LUKS2 token 0 (null when unset). */
export interface DiskTokenReader {
  token(): Promise<Record<string, unknown> | null>;
}

/**
 * What this boot finds (docs/protocol/bootstrapper.md, plus the rejoin the reference did in its disk-mapper):
 * a marked register means the node already (re)joined in this boot; a node state file on an
 * initialised state disk means it joined in an earlier boot and must rejoin; otherwise it is fresh.
 */
export async function detectNodeCondition(mark: MarkReader, disk: DiskTokenReader, nodeStatePath: string): Promise<NodeCondition> {
  const value = await mark.readMark();
  if (isMarkedValue(value)) return 'bootstrapped';
  let hasState = true;
  try {
    await access(nodeStatePath);
  } catch {
    hasState = false;
  }
  if (!hasState) return 'fresh';
  const token = await disk.token();
  // A node state without an initialised disk is a half-finished bootstrap: start over.
  return token?.diskIsInitialized === true ? 'initialized' : 'fresh';
}
