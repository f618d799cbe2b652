import { AsterismError } from '@asterism/errors';

/**
 * Why an init did not succeed. The InitServer (the gRPC boundary) maps the codes to statuses:
 * INIT_SECRET_INVALID -> PermissionDenied, INVALID_REQUEST -> InvalidArgument,
 * ALREADY_ACTIVATING -> FailedPrecondition, TOO_MANY_ATTEMPTS (too many wrong init secrets from
 * this address, docs/adr/0007) -> ResourceExhausted, LOCK_FAILED, STEP_FAILED and DISK_BOUND_TO_OTHER_IDENTITY
 * (the new cluster already binds this node's disk to another attestation key or name,
 * docs/adr/0008) -> Internal.
 */
export type InitFailureCode = 'INIT_SECRET_INVALID' | 'INVALID_REQUEST' | 'ALREADY_ACTIVATING' | 'TOO_MANY_ATTEMPTS' | 'LOCK_FAILED' | 'STEP_FAILED' | 'DISK_BOUND_TO_OTHER_IDENTITY';

/** Codes raised once the node may be locked: such a node cannot be initialised again without a reset. */
const AFTER_LOCK: ReadonlySet<InitFailureCode> = new Set<InitFailureCode>(['LOCK_FAILED', 'STEP_FAILED', 'DISK_BOUND_TO_OTHER_IDENTITY']);

/** A failed init with its reason code; the message is what the client sees (no secrets). */
export class InitFailure extends AsterismError<InitFailureCode> {
  /** Whether the failure happened after the node was (possibly) locked. */
  get afterLock(): boolean {
    return AFTER_LOCK.has(this.code);
  }
}
