import bcrypt from 'bcryptjs';
import { ClusterKms, dataKeyInfo, deriveClusterId, MEASUREMENT_SECRET_KEY_ID, SSH_CA_KEY_SUFFIX, stateDiskKeyId, STATE_DISK_KEY_LENGTH } from '@asterism/crypto';
import type { Logger } from '@asterism/logger';
import type { NodeLock } from '@asterism/nodelock';
import type { init } from '@asterism/proto';
import type { StateDisk } from '../disk/state-disk.js';
import type { NodeFileWriter } from '../state/file-writer.js';
import { writeNodeState } from '../state/node-state.js';
import { InitFailure } from './init-failure.js';
import { validateInitRequest } from './init-request.js';
import type { HostInfo, LogSource } from '../host/ports.js';
import type { ClusterInitializer, SshSetup } from './ports.js';

export { InitFailure, type InitFailureCode } from './init-failure.js';

/** Size of the log chunks streamed after a failure (docs/protocol/bootstrapper.md). */
export const LOG_CHUNK_SIZE = 1024;
/** Upper bound for the init secret (the reference had none; bcrypt reads 72 bytes). */
const MAX_INIT_SECRET = 1024;

/** Everything the init flow is built from. */
export interface InitFlowDeps {
  initSecretHash: string;
  lock: NodeLock;
  disk: StateDisk;
  files: NodeFileWriter;
  ssh: SshSetup;
  host: HostInfo;
  cluster: ClusterInitializer;
  /** Stops the JoinClient (and, after this call, the InitServer). */
  onLocked: () => void;
  logger: Logger;
}

/** Whether `secret` matches the bcrypt hash (`$2a$`/`$2b$`; bcrypt only reads 72 bytes). */
export async function initSecretMatches(hash: string, secret: Uint8Array): Promise<boolean> {
  if (secret.length === 0 || secret.length > 72) return false;
  try {
    return await bcrypt.compare(Buffer.from(secret).toString('utf8'), hash);
  } catch {
    return false;
  }
}

/** Callbacks into the caller at points of the flow. */
export interface InitHooks {
  /** The init secret matched: the caller may now be told more (e.g. the node's logs on failure). */
  onSecretVerified?: () => void;
}

/**
 * The InitServer's Init steps in the reference's order (docs/protocol/bootstrapper.md): secret check, request
 * validation (all of it, before any key derivation), KMS, measurement secret and cluster ID, node lock (PCR 15), stop the JoinClient, re-key the state
 * disk, node state, emergency SSH, Kubernetes. Returns the success response or throws InitFailure.
 */
export class InitFlow {
  constructor(private readonly deps: InitFlowDeps) {}

  async run(req: init.InitRequest, signal?: AbortSignal, hooks: InitHooks = {}): Promise<init.InitSuccessResponse> {
    const d = this.deps;
    if (req.initSecret.length > MAX_INIT_SECRET || !(await initSecretMatches(d.initSecretHash, req.initSecret))) {
      throw new InitFailure('INIT_SECRET_INVALID', 'invalid init secret');
    }
    hooks.onSecretVerified?.();
    // Everything checkable is checked before the first key derivation and the lock.
    const valid = validateInitRequest(req);
    const masterSecret = valid.masterSecret;
    const kms = new ClusterKms(masterSecret);
    const measurementSecret = kms.getDek(dataKeyInfo(MEASUREMENT_SECRET_KEY_ID), 32);
    const clusterId = deriveClusterId(measurementSecret, valid.measurementSalt);

    let lock;
    try {
      lock = await d.lock.tryLockOnce(clusterId, 'init');
    } catch (err) {
      throw new InitFailure('LOCK_FAILED', `locking node: ${(err as Error).message}`, { cause: err });
    }
    if (lock === 'already-locked') throw new InitFailure('ALREADY_ACTIVATING', 'node is already being activated');
    d.logger.info('node locked for init', { clusterId: clusterId.toString('hex') });
    d.onLocked();

    const after = async <T>(context: string, fn: () => Promise<T>): Promise<T> => {
      const started = performance.now();
      try {
        const out = await fn();
        d.logger.info('init step finished', { step: context, durationMs: Math.round(performance.now() - started) });
        return out;
      } catch (err) {
        throw new InitFailure('STEP_FAILED', `${context}: ${(err as Error).message}`, { cause: err });
      }
    };

    await after('setting up disk', async () => {
      const uuid = await d.disk.uuid();
      await d.disk.updatePassphrase(kms.getDek(stateDiskKeyId(uuid), STATE_DISK_KEY_LENGTH));
    });
    await after('persisting node state', () => writeNodeState(d.files, { role: 'ControlPlane', measurementSalt: Buffer.from(req.measurementSalt) }));
    await after('setting up emergency SSH', async () => {
      const seed = kms.getDek(dataKeyInfo(SSH_CA_KEY_SUFFIX), 32);
      const principals = [...(await d.host.addresses()), await d.host.hostname(), ...req.apiserverCertSans].filter((p) => p !== '');
      await d.ssh.install(seed, [...new Set(principals)]);
    });
    const kubeconfig = await after('initializing cluster', () =>
      d.cluster.initCluster(
        {
          kubernetesVersion: req.kubernetesVersion,
          clusterName: req.clusterName || 'constellation',
          conformanceMode: req.conformanceMode,
          components: req.kubernetesComponents,
          apiServerCertSans: req.apiserverCertSans,
          serviceCidr: req.serviceCidr,
          serviceSecrets: { masterSecret: Buffer.from(masterSecret.key), masterSalt: Buffer.from(masterSecret.salt), measurementSalt: Buffer.from(req.measurementSalt) },
        },
        signal,
      ),
    );
    d.logger.info('cluster initialized');
    return { kubeconfig, ownerId: Buffer.alloc(0), clusterId };
  }
}

/** Splits a log stream into LOG_CHUNK_SIZE chunks (the last may be shorter). */
export async function* chunkLogs(source: LogSource, size = LOG_CHUNK_SIZE): AsyncGenerator<Buffer> {
  let pending = Buffer.alloc(0);
  for await (const part of source.read()) {
    pending = Buffer.concat([pending, part]);
    while (pending.length >= size) {
      yield pending.subarray(0, size);
      pending = pending.subarray(size);
    }
  }
  if (pending.length > 0) yield pending;
}
