import * as grpc from '@grpc/grpc-js';
import { AsterismError } from '@asterism/errors';
import { statusName } from '@asterism/logger';

/**
 * A service's answer table: domain error code -> gRPC status. Each server declares one next to its
 * handlers (typed `Record<TheirCode, grpc.status>` so a new code cannot be forgotten); codes that are
 * not in the table, and every error that is not an AsterismError, become INTERNAL.
 */
export type StatusTable = Readonly<Partial<Record<string, grpc.status>>>;

/** The status a failed call ends with, plus whether its cause is internal (log it, do not send it). */
export interface RpcStatus {
  code: grpc.status;
  /** Text sent to the peer: the domain error's message, or a generic text for internal causes. */
  details: string;
  /** True when the cause is a fault of this server: the caller must log `err` (with its request id). */
  internal: boolean;
}

/** Options of {@link toStatus}. */
export interface ToStatusOptions {
  /** An id the operator finds in this server's logs (e.g. the join id), named in the generic text. */
  ref?: string;
  /**
   * Send the internal cause's message anyway. Only for a peer that is entitled to it (the InitServer
   * after the init secret matched: that caller receives the node's full logs in the same answer).
   */
  revealInternal?: boolean;
}

/**
 * The one error-to-status function of every gRPC service (connect-es style): domain errors map
 * through the service's table, everything else is INTERNAL with a generic text, so internal causes
 * never reach the wire. A table entry of INTERNAL is treated like an unknown error.
 */
export function toStatus(err: unknown, statusOf: StatusTable, options: ToStatusOptions = {}): RpcStatus {
  if (err instanceof AsterismError && Object.hasOwn(statusOf, err.code)) {
    const code = statusOf[err.code];
    if (code !== undefined && code !== grpc.status.INTERNAL) return { code, details: err.message, internal: false };
  }
  if (options.revealInternal) return { code: grpc.status.INTERNAL, details: err instanceof Error ? err.message : String(err), internal: true };
  return { code: grpc.status.INTERNAL, details: options.ref ? `internal error (ref ${options.ref})` : 'internal error', internal: true };
}

/** Go's rendering of a gRPC status (`rpc error: code = NotFound desc = ...`), for wire fields that carry it as text. */
export function goStatusText(code: grpc.status, details: string): string {
  return `rpc error: code = ${statusName(code)} desc = ${details}`;
}
