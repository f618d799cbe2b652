import { AsterismError } from '@asterism/errors';

/**
 * Reasons a join or rejoin ticket was not issued. The gRPC boundary (join-server.ts) maps them:
 * INVALID_REQUEST -> InvalidArgument, *_UNAVAILABLE -> Unavailable,
 * CONTROL_PLANE_JOIN_IN_PROGRESS -> Aborted, INTERNAL -> Internal (message kept in the logs only).
 */
export type JoinErrorCode = 'INVALID_REQUEST' | 'KEYSERVICE_UNAVAILABLE' | 'KUBERNETES_UNAVAILABLE' | 'CONTROL_PLANE_JOIN_IN_PROGRESS' | 'INTERNAL';

/** A ticket could not be issued; `message` has no secrets and is sent to the client unless the code is INTERNAL. */
export class JoinError extends AsterismError<JoinErrorCode> {}
