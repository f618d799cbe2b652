import { readFile } from 'node:fs/promises';
import { AtlsError } from '@asterism/atls';
import { encodeClusterKmsUri, generateNonce, NO_STORE_URI, randomBytes, type MasterSecret } from '@asterism/crypto';
import { AsterismError } from '@asterism/errors';
import type { components, init } from '@asterism/proto';
import { RpcError } from '@asterism/service-runtime';
import { decodeMasterSecretFile, encodeMasterSecretFile, ensureWorkspace, workspacePath, writePrivateFile } from './outputs.js';

/** The InitServer's reasons (status metadata, docs/adr/0027) the CLI restores. */
export const INIT_REASONS = ['INIT_SECRET_INVALID', 'INVALID_REQUEST', 'ALREADY_ACTIVATING', 'TOO_MANY_ATTEMPTS'] as const;

/**
 * Opens the Init stream to a node (over aTLS with the CLI's validator). A failed connection throws
 * the AtlsError that says why; a failed call the RpcError restored from its status.
 */
export interface InitConnector {
  init(endpoint: string, req: init.InitRequest, signal?: AbortSignal): AsyncIterable<init.InitResponse>;
}

/** Where the CLI reports progress (stderr by default). */
export interface Progress {
  info(line: string): void;
  /** Raw node log bytes streamed after a failure. */
  nodeLog(chunk: Buffer): void;
}

/** Why `init` failed; `code` tells the user what to do. */
export class InitCommandError extends AsterismError<'NODE_UNREACHABLE' | 'ATTESTATION_REFUSED' | 'INIT_FAILED' | 'NO_RESPONSE' | 'OUTPUT_FAILED' | 'CONFIG_INVALID'> {}

/** Options of `asterism init`. */
export interface InitOptions {
  endpoint: string;
  workspace: string;
  initSecret: Buffer;
  clusterName?: string;
  kubernetesVersion?: string;
  /** The components of that version the node installs (empty: the node image carries them). */
  components?: components.Component[];
  apiServerCertSans?: string[];
  serviceCidr?: string;
  conformance?: boolean;
  /** Reuse this master secret file instead of generating one. */
  masterSecretFile?: string;
  /** Retry budget while the node is unreachable (never after a first connection). */
  retryForMs?: number;
  retryDelayMs?: number;
}

/** What a successful init produced. */
export interface InitResult {
  clusterId: Buffer;
  kubeconfigPath: string;
  masterSecretPath: string;
  measurementSalt: Buffer;
  masterSecret: MasterSecret;
}

/**
 * `asterism init`: generates (or loads) the master secret and a measurement salt, sends the
 * InitRequest to the attested node, prints progress, and on success writes the kubeconfig, the
 * master secret and the cluster id with mode 0600. It retries only while the node is
 * unavailable and never after a connection succeeded (docs/protocol/bootstrapper.md, CLI expectations).
 */
export async function runInit(connector: InitConnector, opts: InitOptions, progress: Progress): Promise<InitResult> {
  await ensureWorkspace(opts.workspace);
  const { masterSecret, masterSecretPath } = await masterSecretFor(opts);
  const measurementSalt = generateNonce();
  const req = initRequest(opts, masterSecret, measurementSalt);
  const deadline = Date.now() + (opts.retryForMs ?? 5 * 60_000);
  for (let attempt = 1; ; attempt++) {
    progress.info(attempt === 1 ? `Connecting to ${opts.endpoint} (attested TLS)...` : `Retrying ${opts.endpoint} (attempt ${attempt})...`);
    const outcome = await initAttempt(connector, opts, req, progress, deadline);
    if (outcome === 'retry') {
      await new Promise((r) => setTimeout(r, opts.retryDelayMs ?? 2000));
      continue;
    }
    return finish(outcome, opts, masterSecret, masterSecretPath, measurementSalt, progress);
  }
}

/** Loads `--master-secret`, or generates one and writes it before the request (init may succeed and the CLI die). */
async function masterSecretFor(opts: InitOptions): Promise<{ masterSecret: MasterSecret; masterSecretPath: string }> {
  const masterSecretPath = workspacePath(opts.workspace, 'masterSecret');
  if (opts.masterSecretFile) {
    try {
      return { masterSecret: decodeMasterSecretFile(await readFile(opts.masterSecretFile, 'utf8')), masterSecretPath };
    } catch (err) {
      throw new InitCommandError('CONFIG_INVALID', `reading master secret ${opts.masterSecretFile}: ${(err as Error).message}`);
    }
  }
  const masterSecret = { key: randomBytes(32), salt: randomBytes(32) };
  try {
    await writePrivateFile(masterSecretPath, encodeMasterSecretFile(masterSecret), { exclusive: true });
  } catch (err) {
    throw new InitCommandError('OUTPUT_FAILED', `writing ${masterSecretPath}: ${(err as Error).message} (remove it or pass --master-secret to reuse it)`);
  }
  return { masterSecret, masterSecretPath };
}

function initRequest(opts: InitOptions, masterSecret: MasterSecret, measurementSalt: Buffer): init.InitRequest {
  return {
    kmsUri: encodeClusterKmsUri(masterSecret),
    storageUri: NO_STORE_URI,
    measurementSalt,
    kubernetesVersion: opts.kubernetesVersion ?? '',
    conformanceMode: opts.conformance ?? false,
    kubernetesComponents: opts.components ?? [],
    initSecret: opts.initSecret,
    clusterName: opts.clusterName ?? '',
    apiserverCertSans: opts.apiServerCertSans ?? [],
    serviceCidr: opts.serviceCidr ?? '',
  };
}

/**
 * One Init call: the success response, 'retry' while the node is not reachable yet (before the
 * deadline), or an InitCommandError. After a failure message the node streams its logs (only to
 * callers that proved the init secret, docs/adr/0007) and ends the call with an error status.
 */
async function initAttempt(connector: InitConnector, opts: InitOptions, req: init.InitRequest, progress: Progress, deadline: number): Promise<init.InitSuccessResponse | 'retry'> {
  let connected = false;
  let failure: string | undefined;
  let sawLog = false;
  try {
    for await (const msg of connector.init(opts.endpoint, req)) {
      if (!connected) progress.info('Node attested. Initializing the cluster (this takes a while)...');
      connected = true;
      if (msg.initSuccess) return msg.initSuccess;
      if (msg.initFailure) {
        failure = msg.initFailure.error;
        progress.info(`Init failed on the node: ${failure}`);
      }
      if (msg.log) {
        if (!sawLog) progress.info('Node logs follow:');
        sawLog = true;
        progress.nodeLog(msg.log.log);
      }
    }
  } catch (err) {
    if (failure === undefined) return callFailed(err, connected, opts, progress, deadline);
  }
  if (failure !== undefined) throw new InitCommandError('INIT_FAILED', failure);
  throw new InitCommandError('NO_RESPONSE', 'the node closed the connection without a result');
}

/** Classifies a call that ended without a failure message: retry only while never connected and unavailable. */
function callFailed(err: unknown, connected: boolean, opts: InitOptions, progress: Progress, deadline: number): 'retry' {
  if (err instanceof InitCommandError) throw err;
  // A node whose attestation was checked and refused will not change its mind: no retry. Any other
  // aTLS connection failure is the node not being reachable (yet), as grpc-js reports it.
  if (!connected && err instanceof AtlsError && err.code === 'ATTESTATION_INVALID') {
    throw new InitCommandError('ATTESTATION_REFUSED', `node ${opts.endpoint} failed attestation: ${err.reason}`, { cause: err });
  }
  const unreachable = !connected && (err instanceof AtlsError || (err instanceof RpcError && (err.code === 'UNAVAILABLE' || err.code === 'DEADLINE_EXCEEDED')));
  const reason = err instanceof AtlsError ? err.reason : errorText(err);
  if (unreachable && Date.now() < deadline) {
    progress.info(`Node not reachable yet (${reason})`);
    return 'retry';
  }
  if (unreachable && !(err instanceof RpcError && err.code === 'DEADLINE_EXCEEDED')) {
    throw new InitCommandError('NODE_UNREACHABLE', `node ${opts.endpoint} is unreachable or failed attestation: ${err instanceof AtlsError ? err.reason : (err as Error).message}`, { cause: err });
  }
  throw new InitCommandError('INIT_FAILED', (err as Error).message, { cause: err });
}

async function finish(success: init.InitSuccessResponse, opts: InitOptions, masterSecret: MasterSecret, masterSecretPath: string, measurementSalt: Buffer, progress: Progress): Promise<InitResult> {
  const kubeconfigPath = workspacePath(opts.workspace, 'kubeconfig');
  try {
    await writePrivateFile(kubeconfigPath, success.kubeconfig);
    await writePrivateFile(
      workspacePath(opts.workspace, 'clusterId'),
      `${JSON.stringify({ clusterID: success.clusterId.toString('base64'), ownerID: '', endpoint: opts.endpoint, measurementSalt: measurementSalt.toString('base64') }, null, 2)}\n`,
    );
  } catch (err) {
    throw new InitCommandError('OUTPUT_FAILED', `writing init results to ${opts.workspace}: ${(err as Error).message}`);
  }
  progress.info(`Cluster initialized. Cluster ID: ${success.clusterId.toString('base64')}`);
  progress.info(`Kubeconfig: ${kubeconfigPath}`);
  return { clusterId: success.clusterId, kubeconfigPath, masterSecretPath, measurementSalt, masterSecret };
}

/** grpc-js's connection failure text without its framing, for the progress line: `connect ECONNREFUSED 10.0.0.1:9000`. */
function errorText(err: unknown): string {
  const text = err instanceof RpcError ? err.statusDetails : (err as Error).message;
  return text
    .replace(/\s*Resolution note:\s*$/, '')
    .replace(/^No connection established\. Last error: (Error: )?/, '')
    .replace(/\.$/, '');
}
