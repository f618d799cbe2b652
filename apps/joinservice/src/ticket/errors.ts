import { AsterismError } from '@asterism/errors';

/**
 * Reasons a join or rejoin ticket was not issued. The gRPC boundary maps them:
 * INVALID_REQUEST -> InvalidArgument, *_UNAVAILABLE -> Unavailable,
 * CONTROL_PLANE_JOIN_IN_PROGRESS -> Aborted, INTERNAL -> Internal.
 */
export type JoinErrorCode = 'INVALID_REQUEST' | 'KEYSERVICE_UNAVAILABLE' | 'KUBERNETES_UNAVAILABLE' | 'CONTROL_PLANE_JOIN_IN_PROGRESS' | 'INTERNAL';

/** A ticket could not be issued; `message` is safe to send to the client (no secrets). */
export class JoinError extends AsterismError<JoinErrorCode> {}
