import { readFile } from 'node:fs/promises';
import { encodeClusterKmsUri, MASTER_SECRET_LENGTH_MIN, NO_STORE_URI, type MasterSecret } from '@asterism/crypto';
import { AsterismError } from '@asterism/errors';
import { fromStatus, type RpcError } from '@asterism/service-runtime';
import type { recoverproto } from '@asterism/proto';
import { decodeMasterSecretFile } from '../init/outputs.js';

/** Sends one Recover call over aTLS; `attestationError` tells whether the node failed attestation. */
export interface RecoverConnector {
  recover(endpoint: string, req: recoverproto.RecoverMessage, signal: AbortSignal): Promise<void>;
  /** The attestation failure of the last connection to `endpoint`, if its validation refused it. */
  attestationError(endpoint: string): Error | undefined;
}

/** Why recovering one node failed; each code has its own exit status and message. */
export type RecoverFailureCode = 'MASTER_SECRET_INVALID' | 'ATTESTATION_FAILED' | 'NODE_UNREACHABLE' | 'NOT_WAITING' | 'KEY_REFUSED' | 'REQUEST_INVALID' | 'RECOVER_FAILED';

/** A failed `recover` (for one node, or before any node was contacted). */
export class RecoverCommandError extends AsterismError<RecoverFailureCode> {}

/** Options of `asterism recover`. */
export interface RecoverOptions {
  endpoints: string[];
  masterSecretFile: string;
  /** How long to retry a node that is not (yet) serving recovery. */
  retryForMs: number;
  retryDelayMs?: number;
}

/** The outcome per node, in the order given. */
export type RecoverReport = Array<{ endpoint: string; ok: true } | { endpoint: string; ok: false; error: RecoverCommandError }>;

/** Reads and checks the master secret file before any node is contacted. */
export async function readMasterSecret(path: string): Promise<MasterSecret> {
  let master: MasterSecret;
  try {
    master = decodeMasterSecretFile(await readFile(path, 'utf8'));
  } catch (err) {
    throw new RecoverCommandError('MASTER_SECRET_INVALID', `reading master secret ${path}: ${(err as Error).message}`);
  }
  if (master.key.length < MASTER_SECRET_LENGTH_MIN) throw new RecoverCommandError('MASTER_SECRET_INVALID', `master secret ${path}: the key is shorter than ${MASTER_SECRET_LENGTH_MIN} bytes`);
  if (master.salt.length === 0) throw new RecoverCommandError('MASTER_SECRET_INVALID', `master secret ${path}: the salt is empty`);
  return master;
}

/**
 * `asterism recover` (docs/protocol/recovery.md): reads the master secret, then for every node
 * attests it (aTLS) and sends the cluster KMS URI; retries while the node does not serve yet.
 * Every node is tried; the report says per node what happened.
 */
export async function runRecover(connector: RecoverConnector, opts: RecoverOptions, progress: (line: string) => void): Promise<RecoverReport> {
  const master = await readMasterSecret(opts.masterSecretFile);
  const req: recoverproto.RecoverMessage = { kmsUri: encodeClusterKmsUri(master), storageUri: NO_STORE_URI };
  const report: RecoverReport = [];
  for (const endpoint of opts.endpoints) {
    progress(`Recovering ${endpoint} ...`);
    try {
      await recoverOne(connector, endpoint, req, opts);
      progress(`${endpoint}: recovered (the node unlocks its state disk and rejoins)`);
      report.push({ endpoint, ok: true });
    } catch (err) {
      const error = err instanceof RecoverCommandError ? err : new RecoverCommandError('RECOVER_FAILED', `${endpoint}: ${(err as Error).message}`);
      progress(`${endpoint}: ${error.message}`);
      report.push({ endpoint, ok: false, error });
    }
  }
  return report;
}

async function recoverOne(connector: RecoverConnector, endpoint: string, req: recoverproto.RecoverMessage, opts: RecoverOptions): Promise<void> {
  const deadline = Date.now() + opts.retryForMs;
  for (let attempt = 1; ; attempt++) {
    try {
      await connector.recover(endpoint, req, AbortSignal.timeout(Math.max(1000, Math.min(30_000, deadline - Date.now()))));
      return;
    } catch (err) {
      const attestation = connector.attestationError(endpoint);
      if (attestation) throw new RecoverCommandError('ATTESTATION_FAILED', `the node failed attestation: ${attestation.message}`);
      const failure = classify(fromStatus(err, RECOVERY_REASONS));
      if (failure) throw failure;
      if (Date.now() + (opts.retryDelayMs ?? 2000) >= deadline) {
        throw new RecoverCommandError('NODE_UNREACHABLE', `no recovery server reachable after ${attempt} attempts (is the node up and waiting for recovery on port 9999?): ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, opts.retryDelayMs ?? 2000));
    }
  }
}

/** The recovery server's reasons (status metadata, docs/protocol/grpc-apis.md) the CLI acts on. */
export const RECOVERY_REASONS = ['NOT_WAITING', 'KMS_URI_INVALID', 'KEY_DOES_NOT_OPEN_DISK'] as const;

/**
 * A final failure for the node's answer, or undefined when the call may be retried. The reason in
 * the status metadata decides; a node that sends none (the reference's) is judged by the status code.
 */
function classify(err: RpcError<(typeof RECOVERY_REASONS)[number]>): RecoverCommandError | undefined {
  const details = err.statusDetails || err.message;
  switch (err.code) {
    // RESOURCE_EXHAUSTED: the node's attempt limit or busy key check (docs/adr/0029); it says when to come back.
    case 'UNAVAILABLE':
    case 'DEADLINE_EXCEEDED':
    case 'RESOURCE_EXHAUSTED':
      return undefined;
    case 'NOT_WAITING':
    case 'FAILED_PRECONDITION':
      return new RecoverCommandError('NOT_WAITING', `the node refused: ${details}`, { cause: err });
    case 'KEY_DOES_NOT_OPEN_DISK':
    case 'PERMISSION_DENIED':
      return new RecoverCommandError('KEY_REFUSED', `the node refused the master secret: ${details}`, { cause: err });
    case 'KMS_URI_INVALID':
    case 'INVALID_ARGUMENT':
      return new RecoverCommandError('REQUEST_INVALID', `the node refused the request: ${details}`, { cause: err });
    default:
      return new RecoverCommandError('RECOVER_FAILED', `recovery failed on the node: ${details}`, { cause: err });
  }
}
