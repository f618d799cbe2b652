/**
 * The first control plane's disk binding (docs/adr/0008-attestation-bound-node-identity.md): the
 * init node never joins, so the joinservice never binds its disk; without a binding, the first
 * attested node to ask for that disk UUID would be bound to it and get its key. At init the
 * bootstrapper therefore writes the binding itself, with the code the joinservice checks against:
 * `attestationKeyDigest` of a document its own issuer produced, `ConfigMapIdentityBindings`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { attestationKeyDigest, type Issuer } from '@asterism/attestation';
import { AsterismError, isAsterismError } from '@asterism/errors';
import type { IdentityBinding } from '@asterism/k8s';
import type { Logger } from '@asterism/logger';
import type { OwnDiskBinding } from '../initserver/ports.js';

/**
 * Why the init node's disk could not be bound: `DISK_BOUND_TO_OTHER_IDENTITY` (final: another
 * attestation key or name holds it) or `BINDING_STORE_UNAVAILABLE` (the apiserver did not answer in
 * time, or a binding vanished between create and read; retried).
 */
export type DiskBindingErrorCode = 'DISK_BOUND_TO_OTHER_IDENTITY' | 'BINDING_STORE_UNAVAILABLE';

/** A failed init binding; `details` name the disk and, for a conflict, the binding found. */
export class DiskBindingError extends AsterismError<DiskBindingErrorCode> {}

/** Create-only store of disk bindings in the new cluster (consumer-declared; `ConfigMapIdentityBindings` in cluster-binding-store.ts). */
export interface DiskBindingStore {
  get(diskUuid: string): Promise<IdentityBinding | undefined>;
  create(binding: IdentityBinding): Promise<'created' | 'exists'>;
}

/** What the binder is built from. */
export interface InitDiskBinderDeps {
  /** The node's own attestation issuer (the one its aTLS servers use). */
  issuer: Issuer;
  /** The binding store of the cluster the admin kubeconfig reaches (cluster-binding-store.ts; may load its client lazily). */
  storeFor(adminKubeconfig: Buffer): DiskBindingStore | Promise<DiskBindingStore>;
  logger: Logger;
  now?: () => Date;
  /** Tries of the store calls while the apiserver does not answer, and the pause between them (default 5, 1 s). */
  retry?: { attempts: number; delayMs: number };
  /** Deadline of one create-or-compare try (default 10 s, as the joinservice's outbound calls). */
  callTimeoutMs?: number;
}

/** User data of the self-issued document: only its AK is read, nobody validates it. */
const BINDING_USER_DATA = createHash('sha256').update('asterism init disk binding').digest();

/** Errors another try may cure: the apiserver not answering (or not in time), a binding that vanished. */
const retryable = (err: unknown) => isAsterismError(err, 'K8S_UNAVAILABLE', 'BINDING_STORE_UNAVAILABLE');

/** Binds the init node's disk to its attestation key, metadata name and role ControlPlane. */
export class InitDiskBinder implements OwnDiskBinding {
  constructor(private readonly d: InitDiskBinderDeps) {}

  async bind(req: { adminKubeconfig: Buffer; diskUuid: string; nodeName: string }, signal?: AbortSignal): Promise<'created' | 'already-bound'> {
    const wanted = await this.ownIdentity(req.diskUuid, req.nodeName, signal);
    const store = await this.d.storeFor(req.adminKubeconfig);
    const outcome = await this.withRetry(() => this.createOrCompare(store, wanted), signal);
    this.d.logger.info(outcome === 'created' ? 'disk bound to this node\'s attestation key' : 'disk already bound to this node\'s attestation key', { diskUuid: wanted.diskUuid, nodeName: wanted.nodeName, akDigest: wanted.akDigest });
    return outcome;
  }

  /**
   * The binding this node claims: AK digest of a fresh self-issued document (random nonce), the
   * metadata name the init flow read (the joinservice names peers from the same source), ControlPlane.
   */
  private async ownIdentity(diskUuid: string, nodeName: string, signal?: AbortSignal): Promise<IdentityBinding> {
    const document = await this.d.issuer.issue(BINDING_USER_DATA, randomBytes(32), signal);
    const akDigest = attestationKeyDigest(this.d.issuer.variant, document);
    return { diskUuid: diskUuid.toLowerCase(), akDigest, nodeName, role: 'ControlPlane', createdAt: (this.d.now?.() ?? new Date()).toISOString() };
  }

  /** Create-only write; when a binding exists, it must be this node's (same AK digest and name). */
  private async createOrCompare(store: DiskBindingStore, wanted: IdentityBinding): Promise<'created' | 'already-bound'> {
    if ((await store.create(wanted)) === 'created') return 'created';
    const bound = await store.get(wanted.diskUuid);
    if (!bound) throw new DiskBindingError('BINDING_STORE_UNAVAILABLE', `the binding of disk ${wanted.diskUuid} exists but could not be read`);
    if (bound.akDigest === wanted.akDigest && bound.nodeName === wanted.nodeName) return 'already-bound';
    const message =
      bound.akDigest === wanted.akDigest
        ? `disk ${wanted.diskUuid} is already bound to this node's attestation key under the node name ${JSON.stringify(bound.nodeName)}, not ${JSON.stringify(wanted.nodeName)}`
        : `disk ${wanted.diskUuid} is already bound to node ${JSON.stringify(bound.nodeName)} with another attestation key (${bound.akDigest}; this node's is ${wanted.akDigest})`;
    throw new DiskBindingError('DISK_BOUND_TO_OTHER_IDENTITY', message, { details: { diskUuid: wanted.diskUuid, boundNodeName: bound.nodeName, boundAkDigest: bound.akDigest, akDigest: wanted.akDigest } });
  }

  /** Runs `fn` under a per-try deadline, again after a pause while the failure is retryable. */
  private async withRetry<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const { attempts, delayMs } = this.d.retry ?? { attempts: 5, delayMs: 1000 };
    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted();
      try {
        return await withDeadline(fn(), this.d.callTimeoutMs ?? 10_000);
      } catch (err) {
        if (!retryable(err) || attempt >= attempts) throw err;
        this.d.logger.warn('binding the disk failed, retrying', { attempt, attempts, err });
        await new Promise((r) => setTimeout(r, delayMs));
      }
    }
  }
}

/** `promise`, or BINDING_STORE_UNAVAILABLE after `ms` (a frozen apiserver must not hold init forever). */
function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DiskBindingError('BINDING_STORE_UNAVAILABLE', `the apiserver did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
