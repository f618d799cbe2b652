/**
 * The attestation deny list stage of a ticket (docs/adr/0037-continuous-attestation.md): a disk
 * UUID or attestation key the attestation monitor quarantined gets no join or rejoin ticket. Runs
 * right after request validation, before the identity binding and any key, token or object.
 */
import { akDigestOf, type DenyEntry } from '@asterism/node-attestation';
import type { AttestedPeer } from '../identity/peer-identity.js';
import { JoinError } from './errors.js';

/** The deny list as the stage reads it (cached, failing closed: `CachedDenyList`). */
export interface DenyListLookup {
  find(q: { diskUuid?: string; akDigest?: string }): Promise<DenyEntry | undefined>;
}

/** Refuses quarantined disks and attestation keys with QUARANTINED (PERMISSION_DENIED). */
export class DenyListCheck {
  constructor(
    private readonly list: DenyListLookup,
    /** The verified attestation of a connection, by grpc-js peer string. */
    private readonly attestedPeer: (peer: string) => AttestedPeer | undefined,
  ) {}

  async check(diskUuid: string, peer: string): Promise<void> {
    const att = this.attestedPeer(peer);
    const akDigest = att?.variant && att.document ? akDigestOf(att.variant, att.document) : undefined;
    const entry = await this.list.find({ diskUuid, ...(akDigest ? { akDigest } : {}) });
    if (!entry) return;
    const what = entry.kind === 'disk' ? `disk ${entry.id}` : `attestation key ${entry.id}`;
    throw new JoinError('QUARANTINED', `${what} is quarantined${entry.node ? ` (node ${entry.node})` : ''}: ${entry.reason}`, { details: { kind: entry.kind, node: entry.node } });
  }
}
