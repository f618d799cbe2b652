import bcrypt from 'bcryptjs';
import { isAsterismError } from '@asterism/errors';
import { ClusterKms, dataKeyInfo, deriveClusterId, MEASUREMENT_SECRET_KEY_ID, SSH_CA_KEY_SUFFIX, stateDiskKeyId, STATE_DISK_KEY_LENGTH } from '@asterism/crypto';
import type { Logger } from '@asterism/logger';
import type { NodeLock } from '@asterism/nodelock';
import type { init } from '@asterism/proto';
import type { StateDisk } from '../disk/state-disk.js';
import type { NodeFileWriter } from '../state/file-writer.js';
import { writeNodeState } from '../state/node-state.js';
import { InitFailure } from './init-failure.js';
import { timedStage } from '../stage-timer.js';
import { validateInitRequest, type ValidInitRequest } from './init-request.js';
import type { HostInfo, LogSource } from '../host/ports.js';
import type { NodeIdentity } from '../node-identity/node-self.js';
import type { ClusterInitializer, NodeIdentitySource, OwnDiskBinding, SshSetup } from './ports.js';

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
  /** Where this node's name, IP and provider ID come from: read once per init, handed to the runtime and the binding. */
  identity: NodeIdentitySource;
  /** Binds this node's disk to its attestation key in the new cluster (docs/adr/0008). */
  diskBinding: OwnDiskBinding;
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

/** What the stages before the lock produce: the validated request, the cluster KMS and the cluster ID. */
interface ClusterKeys {
  valid: ValidInitRequest;
  kms: ClusterKms;
  clusterId: Buffer;
}

/** A stage after the lock failed: the node is locked and cannot be initialised again. */
const stepFailed = (step: string, err: unknown) => new InitFailure('STEP_FAILED', `${step}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });

/** The disk binding stage failed: a disk bound to another identity keeps its own code, anything else is STEP_FAILED. */
const bindingFailed = (step: string, err: unknown) =>
  isAsterismError(err, 'DISK_BOUND_TO_OTHER_IDENTITY') ? new InitFailure('DISK_BOUND_TO_OTHER_IDENTITY', `${step}: ${err.message}`, { cause: err, details: { ...err.details } }) : stepFailed(step, err);

/**
 * The InitServer's Init steps in the reference's order (docs/protocol/bootstrapper.md): secret
 * check, request validation (all of it, before any key derivation), cluster keys, node lock
 * (PCR 15) and stopping the JoinClient, then the timed stages: re-key the state disk, node state,
 * emergency SSH, Kubernetes, binding the disk to this node's attestation key, the cluster services.
 * Returns the success response or throws InitFailure.
 *
 * A failed binding fails init, although the node is locked by then (it resets and reboots like
 * after any late failure): a cluster whose first control plane's disk is unbound would hand that
 * disk's key to the first attested node asking for it, and could never let that control plane
 * rejoin under strict identity binding (docs/adr/0008). The services start only after the binding,
 * so no join can claim the disk first.
 */
export class InitFlow {
  constructor(private readonly deps: InitFlowDeps) {}

  async run(req: init.InitRequest, signal?: AbortSignal, hooks: InitHooks = {}): Promise<init.InitSuccessResponse> {
    await this.checkSecret(req);
    hooks.onSecretVerified?.();
    const keys = this.deriveClusterKeys(req);
    await this.lockNode(keys.clusterId);
    const diskUuid = await this.stage('setting up disk', () => this.setUpDisk(keys.kms));
    await this.stage('persisting node state', () => writeNodeState(this.deps.files, { role: 'ControlPlane', measurementSalt: keys.valid.measurementSalt }));
    await this.stage('setting up emergency SSH', () => this.setUpSsh(keys));
    const node = await this.stage('reading node identity', () => this.deps.identity.read(signal));
    const kubeconfig = await this.stage('initializing cluster', () => this.initCluster(req, keys.valid, node, signal));
    await this.stage('binding disk to attestation key', () => this.deps.diskBinding.bind({ adminKubeconfig: kubeconfig, diskUuid, nodeName: node.name }, signal), bindingFailed);
    const { cluster } = this.deps;
    if (cluster.startServices) await this.stage('starting cluster services', () => cluster.startServices!(signal));
    this.deps.logger.info('cluster initialized');
    return { kubeconfig, ownerId: Buffer.alloc(0), clusterId: keys.clusterId };
  }

  /** The init secret matches the bcrypt hash from the metadata (bounded before bcrypt reads it). */
  private async checkSecret(req: init.InitRequest): Promise<void> {
    if (req.initSecret.length > MAX_INIT_SECRET || !(await initSecretMatches(this.deps.initSecretHash, req.initSecret))) {
      throw new InitFailure('INIT_SECRET_INVALID', 'invalid init secret');
    }
  }

  /** Everything checkable is checked before the first key derivation and the lock. */
  private deriveClusterKeys(req: init.InitRequest): ClusterKeys {
    const valid = validateInitRequest(req);
    const kms = new ClusterKms(valid.masterSecret);
    const measurementSecret = kms.getDek(dataKeyInfo(MEASUREMENT_SECRET_KEY_ID), 32);
    return { valid, kms, clusterId: deriveClusterId(measurementSecret, valid.measurementSalt) };
  }

  /** Takes the node lock (marks the node) and stops the JoinClient; the JoinClient holding it is ALREADY_ACTIVATING. */
  private async lockNode(clusterId: Buffer): Promise<void> {
    let lock;
    try {
      lock = await this.deps.lock.tryLockOnce(clusterId, 'init');
    } catch (err) {
      throw new InitFailure('LOCK_FAILED', `locking node: ${(err as Error).message}`, { cause: err });
    }
    if (lock === 'already-locked') throw new InitFailure('ALREADY_ACTIVATING', 'node is already being activated');
    this.deps.logger.info('node locked for init', { clusterId: clusterId.toString('hex') });
    this.deps.onLocked();
  }

  private stage<T>(step: string, fn: () => Promise<T>, failure = stepFailed): Promise<T> {
    return timedStage(this.deps.logger, 'init step finished', step, fn, failure);
  }

  /** Re-keys the state disk with the key of its (lower-case) UUID; returns the UUID. */
  private async setUpDisk(kms: ClusterKms): Promise<string> {
    const uuid = await this.deps.disk.uuid();
    await this.deps.disk.updatePassphrase(kms.getDek(stateDiskKeyId(uuid), STATE_DISK_KEY_LENGTH));
    return uuid;
  }

  /** Emergency SSH CA from its seed; principals: interface addresses, host name, API server SANs. */
  private async setUpSsh({ kms, valid }: ClusterKeys): Promise<void> {
    const seed = kms.getDek(dataKeyInfo(SSH_CA_KEY_SUFFIX), 32);
    const principals = [...(await this.deps.host.addresses()), await this.deps.host.hostname(), ...valid.apiServerCertSans].filter((p) => p !== '');
    await this.deps.ssh.install(seed, [...new Set(principals)]);
  }

  private initCluster(req: init.InitRequest, valid: ValidInitRequest, node: NodeIdentity, signal?: AbortSignal): Promise<Buffer> {
    const { masterSecret } = valid;
    return this.deps.cluster.initCluster(
      {
        kubernetesVersion: req.kubernetesVersion,
        clusterName: req.clusterName || 'constellation',
        conformanceMode: req.conformanceMode,
        components: req.kubernetesComponents,
        apiServerCertSans: req.apiserverCertSans,
        serviceCidr: req.serviceCidr,
        serviceSecrets: { masterSecret: Buffer.from(masterSecret.key), masterSalt: Buffer.from(masterSecret.salt), measurementSalt: valid.measurementSalt },
        node,
      },
      signal,
    );
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
