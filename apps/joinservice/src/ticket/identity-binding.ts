/**
 * The identity stage of a ticket (docs/adr/0008): checks that the peer may have what it asks for,
 * after request validation and before any key, token, certificate or Kubernetes object exists.
 * Decisions come from the peer's attestation key, the metadata source's name and role for the
 * peer's IP and the disk's binding, never from the request alone.
 */
import { isAsterismError } from '@asterism/errors';
import type { Logger } from '@asterism/logger';
import type { IdentityBinding } from '@asterism/k8s';
import type { Role } from '@asterism/metadata';
import { attestationKeyOf, type ResolvedPeer } from '../identity/peer-identity.js';
import type { TicketCheck } from './admission.js';
import { JoinError } from './errors.js';
import type { JoinRequest, RejoinRequest } from './request-validation.js';

/** What the binding checks read of a validated join request. */
export type JoinIdentityClaim = Pick<JoinRequest, 'diskUuid' | 'nodeName' | 'isControlPlane'>;

/** Name and role of the instance behind a source IP, as the trusted metadata source says. */
export interface PeerDirectory {
  lookup(ip: string, signal?: AbortSignal): Promise<{ name: string; role: Role } | undefined>;
}

/** Create-only store of disk bindings. */
export interface IdentityBindingStore {
  get(diskUuid: string): Promise<IdentityBinding | undefined>;
  create(binding: IdentityBinding): Promise<'created' | 'exists'>;
}

/** What the stage is built from. */
export interface IdentityBindingDeps {
  directory: PeerDirectory;
  store: IdentityBindingStore;
  logger: Logger;
  now?: () => Date;
}

function denied(message: string, reason: string): JoinError {
  return new JoinError('IDENTITY_MISMATCH', message, { details: { reason } });
}

/** Metadata source failures are ours and may pass: retryable, not the client's fault. */
async function lookup(directory: PeerDirectory, ip: string, signal?: AbortSignal) {
  try {
    return await directory.lookup(ip, signal);
  } catch (err) {
    if (isAsterismError(err, 'METADATA_UNAVAILABLE', 'METADATA_MALFORMED', 'METADATA_NOT_FOUND')) {
      throw new JoinError('METADATA_UNAVAILABLE', `looking up the peer in the metadata source: ${err.message}`, { cause: err });
    }
    throw err;
  }
}

/**
 * Strict identity binding (`--identity-binding=strict`): an admission check that reads the peer
 * resolved at the boundary (its IP and accepted attestation), never the transport.
 */
export class IdentityBindingStage implements TicketCheck {
  readonly name = 'the node identity binding';

  constructor(private readonly d: IdentityBindingDeps) {}

  /**
   * IssueJoinTicket: the CSR's node name is the metadata name of the peer's IP, control-plane
   * files only for a metadata role ControlPlane, and the disk is unbound (then bound here, create
   * only: a concurrent first join of the same disk loses with ABORTED) or bound to this AK and name.
   */
  async checkJoin(req: JoinIdentityClaim, peer: ResolvedPeer, signal?: AbortSignal): Promise<void> {
    const akDigest = attestationKeyOf(peer);
    const ip = peer.ip;
    const entry = await lookup(this.d.directory, ip, signal);
    if (!entry) throw denied(`peer ${ip} is not an instance the metadata source knows`, 'PEER_UNKNOWN');
    if (req.nodeName !== entry.name) {
      throw denied(`the certificate request is for node ${JSON.stringify(req.nodeName)}, but the metadata source names this peer ${JSON.stringify(entry.name)}`, 'NODE_NAME_MISMATCH');
    }
    if (req.isControlPlane && entry.role !== 'ControlPlane') {
      throw denied(`node ${entry.name} asked for control-plane files, but its metadata role is ${entry.role}`, 'ROLE_NOT_CONTROL_PLANE');
    }
    const role = req.isControlPlane ? 'ControlPlane' : 'Worker';
    const bound = await this.d.store.get(req.diskUuid);
    if (bound) {
      this.#assertSameIdentity(bound, akDigest, req.nodeName);
      return;
    }
    const created = await this.d.store.create({ diskUuid: req.diskUuid, akDigest, nodeName: req.nodeName, role, createdAt: (this.d.now?.() ?? new Date()).toISOString() });
    if (created === 'exists') {
      throw new JoinError('IDENTITY_BINDING_RACE', `disk ${req.diskUuid} was bound by a concurrent join; retry`, { details: { diskUuid: req.diskUuid } });
    }
    this.d.logger.info('disk bound to node identity', { diskUuid: req.diskUuid, nodeName: req.nodeName, role, akDigest });
  }

  /** IssueRejoinTicket: the disk must be bound to this AK (a disk that never joined has nothing to rejoin). */
  async checkRejoin({ diskUuid }: RejoinRequest, peer: ResolvedPeer): Promise<void> {
    const akDigest = attestationKeyOf(peer);
    const bound = await this.d.store.get(diskUuid);
    if (!bound) throw denied(`disk ${diskUuid} has no identity binding: it never joined this cluster under strict identity binding`, 'DISK_UNBOUND');
    this.#assertSameIdentity(bound, akDigest, undefined);
  }

  #assertSameIdentity(bound: IdentityBinding, akDigest: string, nodeName: string | undefined): void {
    if (bound.akDigest !== akDigest) throw denied(`disk ${bound.diskUuid} is bound to another node's attestation key`, 'DISK_BOUND_TO_OTHER_AK');
    if (nodeName !== undefined && bound.nodeName !== nodeName) {
      throw denied(`disk ${bound.diskUuid} is bound to node ${JSON.stringify(bound.nodeName)}, not ${JSON.stringify(nodeName)}`, 'DISK_BOUND_TO_OTHER_NAME');
    }
  }
}
