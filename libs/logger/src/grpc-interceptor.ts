import * as grpc from '@grpc/grpc-js';
import { readJoinId } from './join-id.js';
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

const statusNames = new Map<number, string>();

/** Name of a gRPC status code, e.g. `InvalidArgument` (memoised: it is on every call's path). */
export function statusName(code: grpc.status): string {
  let name = statusNames.get(code);
  if (name === undefined) {
    name = computeStatusName(code);
    statusNames.set(code, name);
  }
  return name;
}

function computeStatusName(code: grpc.status): string {
  const raw = grpc.status[code] ?? `Code(${code})`;
  return raw
    .toLowerCase()
    .split('_')
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
}

/** Observer for finished calls (metrics hook). */
export type CallObserver = (call: { method: string; code: grpc.status; durationMs: number }) => void;

/** Options of loggingInterceptor. */
export interface LoggingInterceptorOptions {
  /**
   * Level of the line for a successful call: `info` (default) or `debug` for high-rate services,
   * where one info line per call would cost more than the call itself. Failures keep warn/error.
   */
  okLevel?: 'info' | 'debug';
  /**
   * Level of the line for a failed call: by its code (default: warn for a client's mistake, error
   * otherwise) or `debug` for servers whose handlers log their own outcomes (aggregated under a
   * flood), where a second line per call would defeat that.
   */
  failLevel?: 'by-code' | 'debug';
}

/**
 * A grpc-js server interceptor that logs one line per finished call with the stable fields
 * `method`, `peer`, `code`, `status`, `durationMs` (and `details` for failures, `joinId` when the
 * caller sent one, see join-id.ts).
 * Request and response messages are never logged.
 */
export function loggingInterceptor(logger: Logger, observe?: CallObserver, options: LoggingInterceptorOptions = {}): grpc.ServerInterceptor {
  const okLevel = options.okLevel ?? 'info';
  const quietFailures = options.failLevel === 'debug';
  return (methodDescriptor, call) => {
    const started = process.hrtime.bigint();
    const method = methodDescriptor.path;
    let received: grpc.Metadata | undefined;
    const responder: grpc.Responder = {
      start(next) {
        next({
          onReceiveMetadata(metadata, nextMetadata) {
            received = metadata;
            nextMetadata(metadata);
          },
        });
      },
      sendStatus(status, next) {
        const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
        observe?.({ method, code: status.code, durationMs });
        const level = status.code === grpc.status.OK ? okLevel : quietFailures ? 'debug' : undefined;
        if (level !== undefined && !logger.isLevelEnabled(level)) {
          next(status);
          return;
        }
        const joinId = received ? readJoinId(received) : undefined;
        const fields = {
          method,
          peer: call.getPeer(),
          ...(joinId ? { joinId } : {}),
          code: status.code,
          status: statusName(status.code),
          durationMs: Math.round(durationMs * 1000) / 1000,
          ...(status.code === grpc.status.OK ? {} : { details: status.details }),
        };
        if (level !== undefined) logger.log(level, 'rpc finished', fields);
        else if (CLIENT_CODES.has(status.code)) logger.warn('rpc finished', fields);
        else logger.error('rpc finished', fields);
        next(status);
      },
    };
    return new grpc.ServerInterceptingCall(call, responder);
  };
}
