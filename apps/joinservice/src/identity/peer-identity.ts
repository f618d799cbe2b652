import { AttestationError, attestationKeyDigest, type Variant } from '@asterism/attestation';
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

/** IP of a grpc-js peer string (`1.2.3.4:5`, `[::1]:5`, `[::ffff:1.2.3.4]:5`). */
export function peerIp(peer: string): string {
  const host = peer.startsWith('[') ? peer.slice(1, peer.indexOf(']')) : peer.slice(0, peer.lastIndexOf(':'));
  return host.startsWith('::ffff:') && /^\d+\.\d+\.\d+\.\d+$/.test(host.slice(7)) ? host.slice(7) : host;
}
