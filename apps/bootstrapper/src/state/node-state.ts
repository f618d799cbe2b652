import { readFile } from 'node:fs/promises';
import { goField } from '@asterism/attestation';
import { AsterismError } from '@asterism/errors';
import { parseRole, type Role } from '@asterism/metadata';
import type { NodeFileWriter } from './file-writer.js';

/** Where the node state lives on a node. */
export const NODE_STATE_PATH = '/run/state/constellation/node_state.json';

/** What a node remembers about its bootstrap: its role and the cluster's measurement salt. */
export interface NodeState {
  role: Role;
  measurementSalt: Buffer;
}

/** The node state file is missing or broken. */
export class NodeStateError extends AsterismError<'NODE_STATE_MISSING' | 'NODE_STATE_INVALID'> {}

/** Go-JSON with tab indentation, byte-identical to the reference (TestToFile). */
export function encodeNodeState(state: NodeState): string {
  return JSON.stringify({ Role: state.role, MeasurementSalt: state.measurementSalt.toString('base64') }, null, '\t');
}

/** Decodes node_state.json; keys are matched case-insensitively like Go's encoding/json. */
export function decodeNodeState(text: string): NodeState {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new NodeStateError('NODE_STATE_INVALID', `node state is not JSON: ${(err as Error).message}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new NodeStateError('NODE_STATE_INVALID', 'node state is not a JSON object');
  const get = (k: string) => goField(raw as Record<string, unknown>, k);
  const salt = get('MeasurementSalt');
  if (salt !== undefined && salt !== null && (typeof salt !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(salt))) {
    throw new NodeStateError('NODE_STATE_INVALID', 'node state MeasurementSalt is not base64');
  }
  return { role: parseRole(get('Role')), measurementSalt: Buffer.from((salt as string | undefined) ?? '', 'base64') };
}

/** Writes the node state (create-exclusive, 0600). */
export async function writeNodeState(writer: NodeFileWriter, state: NodeState): Promise<void> {
  await writer.writeExclusive(NODE_STATE_PATH, encodeNodeState(state));
}

/** Reads the node state from `path`. */
export async function readNodeState(path: string): Promise<NodeState> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new NodeStateError('NODE_STATE_MISSING', `reading node state ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  return decodeNodeState(text);
}
