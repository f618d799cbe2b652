/**
 * The attestation deny list as an admission check of the ticket pipeline (ticket/admission.ts,
 * docs/adr/0037-continuous-attestation.md): a disk UUID or attestation key the attestation
 * monitor quarantined gets no join or rejoin ticket. It runs first among the admission checks,
 * before the identity binding and any key, token or object.
 */
import { akDigestOf, type DenyEntry } from '@asterism/node-attestation';
import type { ResolvedPeer } from '../identity/peer-identity.js';
import type { TicketCheck } from './admission.js';
import { JoinError } from './errors.js';
import type { JoinRequest, RejoinRequest } from './request-validation.js';

/** The deny list as the check reads it (cached, failing closed: `CachedDenyList`). */
export interface DenyListLookup {
  find(q: { diskUuid?: string; akDigest?: string }): Promise<DenyEntry | undefined>;
}

/** Refuses quarantined disks and attestation keys with QUARANTINED (PERMISSION_DENIED). */
export class DenyListCheck implements TicketCheck {
  readonly name = 'the attestation deny list';

  constructor(private readonly list: DenyListLookup) {}

  checkJoin(req: JoinRequest, peer: ResolvedPeer): Promise<void> {
    return this.check(req.diskUuid, peer);
  }

  checkRejoin(req: RejoinRequest, peer: ResolvedPeer): Promise<void> {
    return this.check(req.diskUuid, peer);
  }

  private async check(diskUuid: string, peer: ResolvedPeer): Promise<void> {
    const att = peer.attestation;
    const akDigest = att?.variant && att.document ? akDigestOf(att.variant, att.document) : undefined;
    const entry = await this.list.find({ diskUuid, ...(akDigest ? { akDigest } : {}) });
    if (!entry) return;
    const what = entry.kind === 'disk' ? `disk ${entry.id}` : `attestation key ${entry.id}`;
    throw new JoinError('QUARANTINED', `${what} is quarantined${entry.node ? ` (node ${entry.node})` : ''}: ${entry.reason}`, { details: { kind: entry.kind, node: entry.node } });
  }
}
