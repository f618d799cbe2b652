import { AttestationError, attestationKeyDigest, type Variant } from '@asterism/attestation';
import { JoinError } from '../ticket/errors.js';

/** What the aTLS layer knows about a verified connection. */
export interface AttestedPeer {
  variant?: Variant;
  document?: Buffer;
}

/**
 * The caller of one ticket request, resolved once at the gRPC boundary (join-server.ts) and handed
 * to every stage of the ticket: nothing downstream asks the transport again.
 */
export interface ResolvedPeer {
  /** The grpc-js peer string (`ip:port`), the fallback SSH principal and the rate limiter's key. */
  address: string;
  /** Source IP of the connection (IPv4-mapped IPv6 unwrapped). */
  ip: string;
  /** The attestation the aTLS layer accepted on this connection; undefined if it knows none. */
  attestation: AttestedPeer | undefined;
}

/** Looks up the verified attestation of a connection by grpc-js peer string (the aTLS credentials). */
export type AttestationLookup = (address: string) => AttestedPeer | undefined;

/** Resolves a grpc-js peer string into a {@link ResolvedPeer}: address, IP and the accepted attestation. */
export function resolvePeer(address: string, attestationOf: AttestationLookup = () => undefined): ResolvedPeer {
  return { address, ip: peerIp(address), attestation: attestationOf(address) };
}

/**
 * The attestation-key digest of the document the aTLS layer accepted from a peer
 * (`attestationKeyDigest` of `@asterism/attestation`, shared with the bootstrapper's init binding).
 * A document whose AK cannot be read is an identity refusal of this join (IDENTITY_MISMATCH).
 */
export function peerAttestationKeyDigest(variant: Variant, document: Uint8Array): string {
  try {
    return attestationKeyDigest(variant, document);
  } catch (err) {
    if (!(err instanceof AttestationError)) throw err;
    throw new JoinError('IDENTITY_MISMATCH', `reading the attestation key of the accepted document: ${err.message}`, { cause: err, details: { reason: err.code } });
  }
}

/**
 * The AK digest of a resolved peer, for checks that decide by attestation key (identity binding,
 * a deny list). A peer without an accepted document is IDENTITY_MISMATCH with reason NOT_ATTESTED.
 */
export function attestationKeyOf(peer: ResolvedPeer): string {
  const att = peer.attestation;
  if (!att?.variant || !att.document) {
    throw new JoinError('IDENTITY_MISMATCH', 'the peer has no verified attestation to bind an identity to', { details: { reason: 'NOT_ATTESTED' } });
  }
  return peerAttestationKeyDigest(att.variant, att.document);
}

/** IP of a grpc-js peer string (`1.2.3.4:5`, `[::1]:5`, `[::ffff:1.2.3.4]:5`). */
export function peerIp(peer: string): string {
  const host = peer.startsWith('[') ? peer.slice(1, peer.indexOf(']')) : peer.slice(0, peer.lastIndexOf(':'));
  return host.startsWith('::ffff:') && /^\d+\.\d+\.\d+\.\d+$/.test(host.slice(7)) ? host.slice(7) : host;
}
