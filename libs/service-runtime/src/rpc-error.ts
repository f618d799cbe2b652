import * as grpc from '@grpc/grpc-js';

/**
 * An error that carries the gRPC status a handler wants to return. Handlers throw these; the
 * boundary (toServiceError) passes them through and turns anything else into INTERNAL with a
 * generic message, so internal causes are logged but not leaked to the wire.
 */
export class RpcError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
    readonly metadata?: grpc.Metadata,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

/** Converts any thrown value to a grpc-js ServiceError-like status object. */
export function toServiceError(err: unknown): Partial<grpc.StatusObject> & { code: grpc.status; details: string } {
  if (err instanceof RpcError) return { code: err.code, details: err.message, ...(err.metadata ? { metadata: err.metadata } : {}) };
  return { code: grpc.status.INTERNAL, details: 'internal error' };
}
