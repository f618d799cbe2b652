import { constants as http2 } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { AsterismError } from '@asterism/errors';
import type { CallObserver, Logger } from '@asterism/logger';
import { toStatus } from './rpc-status.js';

/** Why the server shape ended a stream before its handler ran. */
export type StreamRefusalCode = 'REQUEST_TIMEOUT' | 'REQUEST_MISSING';

/** A stream whose request never (completely) arrived; ended by the server shape, not by a handler. */
export class StreamRefusal extends AsterismError<StreamRefusalCode> {}

/**
 * REQUEST_TIMEOUT is DEADLINE_EXCEEDED: the request's bytes did not arrive in time, which for an
 * honest client is its network (a retry is the right reaction); a request that ended without a
 * message is the client's mistake (INVALID_ARGUMENT), where grpc-js would say UNIMPLEMENTED.
 */
const STATUS_OF: Record<StreamRefusalCode, grpc.status> = {
  REQUEST_TIMEOUT: grpc.status.DEADLINE_EXCEEDED,
  REQUEST_MISSING: grpc.status.INVALID_ARGUMENT,
};

/** How a stream ended without a request: the two refusals above, or the peer reset it first. */
export type AbandonReason = StreamRefusalCode | 'PEER_CANCELLED';

/** Options of {@link requestGuard}. */
export interface RequestGuardOptions {
  /** Time from the server asking for a stream's request to its complete arrival (half-close); then the stream is ended. */
  arrivalMs: number;
  logger: Logger;
  /** Counts the refusals as finished calls (the server's metrics). */
  observe?: CallObserver;
  /** Connections remembered for "logged once per connection" (oldest forgotten first). */
  rememberConnections?: number;
}

/** The HTTP/2 stream under a call: not in grpc-js's typed interface. */
interface Http2StreamLike {
  close?: (code: number) => void;
  closed?: boolean;
  destroyed?: boolean;
}

/**
 * The HTTP/2 stream of a call, found by walking grpc-js's intercepting calls (`nextCall`) down to
 * its base call (`stream`): interceptors of the credentials (an aTLS gate) sit below this one.
 * Private fields of grpc-js 1.14; request-guard.spec.ts and stream-flood.int.spec.ts fail if they move.
 */
function streamOf(call: unknown): Http2StreamLike | undefined {
  let c = call as { stream?: Http2StreamLike; nextCall?: unknown } | undefined;
  for (let depth = 0; c && depth < 16; depth++) {
    if (c.stream) return c.stream;
    c = c.nextCall as typeof c;
  }
  return undefined;
}

/**
 * The first interceptor of the server shape (docs/adr/0027; below it only the credentials' own, such as
 * the aTLS gate): a stream whose request (message and
 * half-close) has not arrived within `arrivalMs` of the server asking for it is answered DEADLINE_EXCEEDED and
 * reset (RST_STREAM NO_ERROR, so its slot under grpc.max_concurrent_streams is free again); a
 * stream half-closed without a message is answered INVALID_ARGUMENT before its handler runs. Such
 * streams, and streams the peer reset before their request arrived, are logged once per connection
 * and reason at info (never a line per stream: an attested peer can open thousands), and counted
 * in the metrics as finished calls. Only for services whose methods take a single request message.
 */
export function requestGuard(options: RequestGuardOptions): grpc.ServerInterceptor {
  const logged = new AbandonLog(options.logger, options.rememberConnections ?? 4096);
  return (method, call) => (method.requestStream ? new grpc.ServerInterceptingCall(call) : new CallGuard(method.path, call, options, logged).intercept());
}

/** The guard of one call: waits for its request, refuses or notes it when it does not come. */
class CallGuard {
  readonly #started = process.hrtime.bigint();
  /** Read now: once the connection is gone grpc-js names every peer 'unknown'. */
  readonly #peer: string;
  readonly #stream: Http2StreamLike | undefined;
  #arrived = false;
  #ended = false;
  #message = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly path: string,
    private readonly call: grpc.ServerInterceptingCallInterface,
    private readonly options: RequestGuardOptions,
    private readonly logged: AbandonLog,
  ) {
    this.#peer = call.getPeer();
    this.#stream = streamOf(call);
  }

  intercept(): grpc.ServerInterceptingCall {
    return new GuardedCall(this.call, () => this.#arm(), {
      start: (next) =>
        next({
          onReceiveMessage: (msg, nextMessage) => {
            this.#message = true;
            nextMessage(msg);
          },
          onReceiveHalfClose: (nextHalfClose) => {
            clearTimeout(this.#timer);
            this.#arrived = true;
            if (!this.#message) return this.#refuse('REQUEST_MISSING', 'the request ended without a message');
            nextHalfClose();
          },
          onCancel: () => {
            clearTimeout(this.#timer);
            if (!this.#arrived) this.#abandoned();
          },
        }),
      sendStatus: (status, next) => {
        // A status from the chain above (an attestation gate, a handler answering early) ends the wait.
        clearTimeout(this.#timer);
        this.#ended = true;
        next(status);
      },
    });
  }

  /** The clock starts when the chain above first asks for the request (after an attestation gate accepted the metadata: its own time is bounded by the gate). */
  #arm(): void {
    if (this.#timer || this.#ended || this.#arrived) return;
    this.#timer = setTimeout(() => this.#refuse('REQUEST_TIMEOUT', `the request did not arrive within ${this.options.arrivalMs} ms`), this.options.arrivalMs);
    this.#timer.unref();
  }

  #abandoned(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.logged.note(this.#peer, 'PEER_CANCELLED', this.path);
  }

  #refuse(code: StreamRefusalCode, details: string): void {
    if (this.#ended) return;
    // A reset stream ends its readable side too: that is the peer leaving, not a missing request.
    if (this.#stream?.closed || this.#stream?.destroyed) return this.#abandoned();
    this.#ended = true;
    const status = toStatus(new StreamRefusal(code, details), STATUS_OF);
    this.options.observe?.({ method: this.path, code: status.code, durationMs: Number(process.hrtime.bigint() - this.#started) / 1e6 });
    this.logged.note(this.#peer, code, this.path);
    this.call.sendStatus(status);
    // HTTP/2 lets a server reset a stream with NO_ERROR after its complete response (RFC 9113 8.1):
    // without it a peer that never half-closes keeps the stream, and its slot, forever.
    if (this.#stream?.close && !this.#stream.closed) this.#stream.close(http2.NGHTTP2_NO_ERROR);
  }
}

/** A ServerInterceptingCall that tells the guard when the request is first read. */
class GuardedCall extends grpc.ServerInterceptingCall {
  constructor(
    call: grpc.ServerInterceptingCallInterface,
    private readonly onRead: () => void,
    responder: grpc.Responder,
  ) {
    super(call, responder);
  }

  override startRead(): void {
    this.onRead();
    super.startRead();
  }
}

/** "Logged once per connection and reason": a bounded memory of the connections already named. */
class AbandonLog {
  readonly #seen = new Map<string, Set<AbandonReason>>();

  constructor(
    private readonly logger: Logger,
    private readonly capacity: number,
  ) {}

  note(peer: string, reason: AbandonReason, method: string): void {
    let reasons = this.#seen.get(peer);
    if (reasons?.has(reason)) return;
    if (!reasons) {
      if (this.#seen.size >= this.capacity) this.#seen.delete(this.#seen.keys().next().value as string);
      reasons = new Set();
      this.#seen.set(peer, reasons);
    }
    reasons.add(reason);
    const text = reason === 'PEER_CANCELLED' ? 'peer reset a stream before its request arrived' : 'stream ended without its request';
    this.logger.info(`${text}; further ones on this connection are counted, not logged`, { peer, reason, method });
  }
}
