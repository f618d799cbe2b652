import * as grpc from '@grpc/grpc-js';
import { AsterismError } from '@asterism/errors';
import { statusName } from '@asterism/logger';

/**
 * Status metadata key that carries the machine-readable reason of a failed call: the domain error's
 * code (e.g. `ATTESTATION_INVALID`, `INIT_SECRET_INVALID`). Clients restore the typed error from it
 * with {@link fromStatus}; the human text in `details` is never parsed (docs/adr/0027).
 */
export const REASON_METADATA = 'x-asterism-reason';

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
  /** Trailing metadata: the reason code ({@link REASON_METADATA}) for domain errors, plus the caller's extra entries. */
  metadata: grpc.Metadata;
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
  /** Extra trailing metadata (e.g. the join id); the reason entry is added to it. */
  metadata?: grpc.Metadata;
  /** The text sent for a domain error; default its message (aTLS prefixes `atls: [CODE]`). */
  describe?: (err: AsterismError) => string;
}

/**
 * The one error-to-status function of every gRPC service (connect-es style): domain errors map
 * through the service's table and carry their code as the reason in the status metadata; everything
 * else is INTERNAL with a generic text and no reason, so internal causes never reach the wire. A
 * table entry of INTERNAL is treated like an unknown error.
 */
export function toStatus(err: unknown, statusOf: StatusTable, options: ToStatusOptions = {}): RpcStatus {
  const metadata = options.metadata ?? new grpc.Metadata();
  if (err instanceof AsterismError && Object.hasOwn(statusOf, err.code)) {
    const code = statusOf[err.code];
    if (code !== undefined && code !== grpc.status.INTERNAL) {
      metadata.set(REASON_METADATA, err.code);
      return { code, details: options.describe ? options.describe(err) : err.message, metadata, internal: false };
    }
  }
  if (options.revealInternal) return { code: grpc.status.INTERNAL, details: err instanceof Error ? err.message : String(err), metadata, internal: true };
  return { code: grpc.status.INTERNAL, details: options.ref ? `internal error (ref ${options.ref})` : 'internal error', metadata, internal: true };
}

/** Go's rendering of a gRPC status (`rpc error: code = NotFound desc = ...`), for wire fields that carry it as text. */
export function goStatusText(code: grpc.status, details: string): string {
  return `rpc error: code = ${statusName(code)} desc = ${details}`;
}

/** The name of a gRPC status as a code, e.g. `UNAVAILABLE`, `DEADLINE_EXCEEDED`. */
export type StatusCodeName = keyof typeof grpc.status;

/** Statuses after which the same call may succeed later (the server was busy, unreachable or too slow). */
const RETRYABLE = new Set<grpc.status>([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED, grpc.status.RESOURCE_EXHAUSTED, grpc.status.ABORTED]);

/**
 * A failed call as its client sees it: `code` is the server's reason (one of the codes the client
 * knows, read from {@link REASON_METADATA}) or, when the status carries none (transport failures,
 * internal errors, servers that predate the reason), the status's name such as `UNAVAILABLE`.
 */
export class RpcError<Reason extends string = string> extends AsterismError<Reason | StatusCodeName> {
  /** The gRPC status code. */
  readonly status: grpc.status;
  /** The server's reason when it sent one the client knows. */
  readonly reason: Reason | undefined;
  /** The status details as received (for display; never parsed). */
  readonly statusDetails: string;

  /** `message` defaults to grpc-js's rendering, `<code> <NAME>: <details>`, which clients print today. */
  constructor(status: grpc.status, reason: Reason | undefined, statusDetails: string, options: { cause?: unknown; message?: string } = {}) {
    const name = (grpc.status[status] as StatusCodeName | undefined) ?? 'UNKNOWN';
    super(reason ?? name, options.message ?? `${status} ${name}: ${statusDetails}`, { details: { grpcCode: status }, ...(options.cause === undefined ? {} : { cause: options.cause }) });
    this.status = status;
    this.reason = reason;
    this.statusDetails = statusDetails;
  }

  /** Whether the same call may succeed later (UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED). */
  get retryable(): boolean {
    return RETRYABLE.has(this.status);
  }
}

/**
 * The one status-to-error function of every client: restores the server's reason from the status
 * metadata when it is one of `reasons` (the codes this client acts on), never from the message text.
 * Anything that is not a gRPC status becomes an RpcError with status UNKNOWN (cause kept).
 */
export function fromStatus<R extends string>(err: unknown, reasons: readonly R[] = []): RpcError<R> {
  if (err instanceof RpcError) return err as RpcError<R>;
  if (!isServiceError(err)) {
    const text = err instanceof Error ? err.message : String(err);
    return new RpcError<R>(grpc.status.UNKNOWN, undefined, text, { cause: err, message: text });
  }
  const sent = err.metadata?.get(REASON_METADATA)[0];
  const reason = typeof sent === 'string' && (reasons as readonly string[]).includes(sent) ? (sent as R) : undefined;
  return new RpcError<R>(err.code, reason, err.details ?? '', { cause: err, message: err.message });
}

/** True for a grpc-js call failure (an Error with a numeric status code). */
export function isServiceError(err: unknown): err is grpc.ServiceError {
  return err instanceof Error && typeof (err as { code?: unknown }).code === 'number' && 'details' in err;
}
