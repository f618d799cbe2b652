import { createHash } from 'node:crypto';
import { decodeDocument, type Variant } from '@asterism/attestation';
import { JoinError } from '../ticket/errors.js';

/** Who a verified peer is, as far as its attestation and its connection tell (docs/adr/0008). */
export interface PeerIdentity {
  /** Source IP of the connection (IPv4-mapped IPv6 unwrapped). */
  ip: string;
  /** `sha256:<hex>` of the AK's TPMT_PUBLIC, or `none:<variant>` for variants without an AK. */
  akDigest: string;
}

/** What the aTLS layer knows about a verified connection. */
export interface AttestedPeer {
  variant?: Variant;
  document?: Buffer;
}

/** Variants whose document is not a vTPM document: they carry no attestation key. */
const WITHOUT_AK = new Set(['dummy', 'qemu-tdx']);

/**
 * The attestation-key digest of an accepted document. Every vTPM variant's document carries
 * `ak_pub` and is signed with that key, so the digest names the (virtual) TPM the node booted with.
 * `dummy` and `qemu-tdx` documents have no AK: all their peers share `none:<variant>` (their disk
 * binding cannot tell nodes apart; the name and role checks still apply).
 */
export function attestationKeyDigest(variant: Variant, document: Uint8Array): string {
  if (WITHOUT_AK.has(variant.name)) return `none:${variant.name}`;
  let akPub: Buffer | undefined;
  try {
    akPub = decodeDocument(document).attestation?.akPub;
  } catch (err) {
    throw new JoinError('IDENTITY_MISMATCH', `reading the attestation key of the accepted ${variant.name} document: ${(err as Error).message}`, { cause: err });
  }
  if (!akPub || akPub.length === 0) throw new JoinError('IDENTITY_MISMATCH', `the accepted ${variant.name} document carries no attestation key`);
  return `sha256:${createHash('sha256').update(akPub).digest('hex')}`;
}

/** IP of a grpc-js peer string (`1.2.3.4:5`, `[::1]:5`, `[::ffff:1.2.3.4]:5`). */
export function peerIp(peer: string): string {
  const host = peer.startsWith('[') ? peer.slice(1, peer.indexOf(']')) : peer.slice(0, peer.lastIndexOf(':'));
  return host.startsWith('::ffff:') && /^\d+\.\d+\.\d+\.\d+$/.test(host.slice(7)) ? host.slice(7) : host;
}
