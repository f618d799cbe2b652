import { AsterismError } from '@asterism/errors';

/**
 * Reasons a join or rejoin ticket was not issued. The gRPC boundary (join-server.ts) maps them:
 * INVALID_REQUEST -> InvalidArgument, *_UNAVAILABLE -> Unavailable,
 * CONTROL_PLANE_JOIN_IN_PROGRESS -> Aborted, INTERNAL -> Internal (message kept in the logs only); identity binding
 * (docs/adr/0008): IDENTITY_MISMATCH -> PermissionDenied, IDENTITY_BINDING_RACE -> Aborted,
 * METADATA_UNAVAILABLE -> Unavailable; RATE_LIMITED (too many requests from this peer) -> ResourceExhausted;
 * QUARANTINED (the disk or attestation key is on the attestation deny list, docs/adr/0037) -> PermissionDenied.
 */
export type JoinErrorCode =
  | 'INVALID_REQUEST'
  | 'KEYSERVICE_UNAVAILABLE'
  | 'KUBERNETES_UNAVAILABLE'
  | 'CONTROL_PLANE_JOIN_IN_PROGRESS'
  | 'INTERNAL'
  | 'IDENTITY_MISMATCH'
  | 'IDENTITY_BINDING_RACE'
  | 'METADATA_UNAVAILABLE'
  | 'RATE_LIMITED'
  | 'QUARANTINED';

/** A ticket could not be issued; `message` has no secrets and is sent to the client unless the code is INTERNAL. */
export class JoinError extends AsterismError<JoinErrorCode> {}

/** An outbound call of a ticket step that ended without an answer; the step tags it with its code and context. */
export class OutboundCallError extends AsterismError<'NO_ANSWER' | 'CANCELLED_BY_CLIENT'> {}
