import bcrypt from 'bcryptjs';
import * as grpc from '@grpc/grpc-js';
import {
  ClusterKms,
  dataKeyInfo,
  deriveClusterId,
  MEASUREMENT_SECRET_KEY_ID,
  parseKmsUri,
  parseStorageUri,
  SSH_CA_KEY_SUFFIX,
  stateDiskKeyId,
  STATE_DISK_KEY_LENGTH,
} from '@asterism/crypto';
import type { Logger } from '@asterism/logger';
import type { NodeLock } from '@asterism/nodelock';
import type { init } from '@asterism/proto';
import type { StateDisk } from '../disk/state-disk.js';
import type { NodeFileWriter } from '../state/file-writer.js';
import { writeNodeState } from '../state/node-state.js';
import type { ClusterInitializer, HostInfo, LogSource, SshSetup } from './ports.js';

/** Size of the log chunks streamed after a failure (SPEC.md §8.3). */
export const LOG_CHUNK_SIZE = 1024;
/** Upper bounds for request fields (the reference had none). */
const MAX_SALT = 1024;
const MAX_INIT_SECRET = 1024;

/** A failed init: the gRPC code of the final status and the client-facing message. */
export class InitFailure extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
    /** Whether the failure happened after the node was locked (it cannot be initialised again). */
    readonly afterLock: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** The reference's `init_failure.error` text: Go's rendering of a gRPC status. */
  get wireText(): string {
    return `rpc error: code = ${codeName(this.code)} desc = ${this.message}`;
  }
}

function codeName(code: grpc.status): string {
  return (grpc.status[code] ?? 'Unknown')
    .toLowerCase()
    .split('_')
    .map((p) => p[0]!.toUpperCase() + p.slice(1))
    .join('');
}

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

/**
 * The InitServer's Init steps in the reference's order (SPEC.md §8.3): secret check, KMS,
 * measurement secret and cluster ID, node lock (PCR 15), stop the JoinClient, re-key the state
 * disk, node state, emergency SSH, Kubernetes. Returns the success response or throws InitFailure.
 */
export class InitFlow {
  constructor(private readonly deps: InitFlowDeps) {}

  async run(req: init.InitRequest, signal?: AbortSignal): Promise<init.InitSuccessResponse> {
    const d = this.deps;
    if (req.initSecret.length > MAX_INIT_SECRET || !(await initSecretMatches(d.initSecretHash, req.initSecret))) {
      throw new InitFailure(grpc.status.PERMISSION_DENIED, 'invalid init secret', false);
    }
    if (req.measurementSalt.length > MAX_SALT) throw new InitFailure(grpc.status.INVALID_ARGUMENT, `measurement salt longer than ${MAX_SALT} bytes`, false);

    let kms: ClusterKms;
    let masterSecret: { key: Uint8Array; salt: Uint8Array };
    try {
      const storage = parseStorageUri(req.storageUri);
      if (storage.type !== 'no-store') throw new Error(`storage backend ${storage.type} is not supported`);
      const cfg = parseKmsUri(req.kmsUri);
      if (cfg.type !== 'cluster-kms') throw new Error(`KMS backend ${cfg.type} is not supported`);
      kms = new ClusterKms(cfg.masterSecret);
      masterSecret = cfg.masterSecret;
    } catch (err) {
      throw new InitFailure(grpc.status.INVALID_ARGUMENT, `creating kms client: ${(err as Error).message}`, false, { cause: err });
    }

    const measurementSecret = kms.getDek(dataKeyInfo(MEASUREMENT_SECRET_KEY_ID), 32);
    const clusterId = deriveClusterId(measurementSecret, req.measurementSalt);

    let lock;
    try {
      lock = await d.lock.tryLockOnce(clusterId, 'init');
    } catch (err) {
      throw new InitFailure(grpc.status.INTERNAL, `locking node: ${(err as Error).message}`, true, { cause: err });
    }
    if (lock === 'already-locked') throw new InitFailure(grpc.status.FAILED_PRECONDITION, 'node is already being activated', false);
    d.logger.info('node locked for init', { clusterId: clusterId.toString('hex') });
    d.onLocked();

    const after = async <T>(context: string, fn: () => Promise<T>): Promise<T> => {
      const started = performance.now();
      try {
        const out = await fn();
        d.logger.info('init step finished', { step: context, durationMs: Math.round(performance.now() - started) });
        return out;
      } catch (err) {
        throw new InitFailure(grpc.status.INTERNAL, `${context}: ${(err as Error).message}`, true, { cause: err });
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
