import * as grpc from '@grpc/grpc-js';
import type { Logger } from './logger.js';

/** Status codes that mean "the client did something wrong", logged at warn rather than error. */
const CLIENT_CODES = new Set<grpc.status>([
  grpc.status.INVALID_ARGUMENT,
  grpc.status.NOT_FOUND,
  grpc.status.ALREADY_EXISTS,
  grpc.status.PERMISSION_DENIED,
  grpc.status.UNAUTHENTICATED,
  grpc.status.FAILED_PRECONDITION,
  grpc.status.OUT_OF_RANGE,
  grpc.status.CANCELLED,
  grpc.status.RESOURCE_EXHAUSTED,
]);

/** Name of a gRPC status code, e.g. `InvalidArgument`. */
export function statusName(code: grpc.status): string {
  const raw = grpc.status[code] ?? `Code(${code})`;
  return raw
    .toLowerCase()
    .split('_')
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
}

/** Observer for finished calls (metrics hook). */
export type CallObserver = (call: { method: string; code: grpc.status; durationMs: number }) => void;

/**
 * A grpc-js server interceptor that logs one line per finished call with the stable fields
 * `method`, `peer`, `code`, `status`, `durationMs` (and `details` for failures).
 * Request and response messages are never logged.
 */
export function loggingInterceptor(logger: Logger, observe?: CallObserver): grpc.ServerInterceptor {
  return (methodDescriptor, call) => {
    const started = process.hrtime.bigint();
    const method = methodDescriptor.path;
    const responder: grpc.Responder = {
      sendStatus(status, next) {
        const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
        const fields = {
          method,
          peer: call.getPeer(),
          code: status.code,
          status: statusName(status.code),
          durationMs: Math.round(durationMs * 1000) / 1000,
          ...(status.code === grpc.status.OK ? {} : { details: status.details }),
        };
        if (status.code === grpc.status.OK) logger.info('rpc finished', fields);
        else if (CLIENT_CODES.has(status.code)) logger.warn('rpc finished', fields);
        else logger.error('rpc finished', fields);
        observe?.({ method, code: status.code, durationMs });
        next(status);
      },
    };
    return new grpc.ServerInterceptingCall(call, responder);
  };
}
