import type { Socket } from 'node:net';
import { AtlsError } from './errors.js';

/** The steps the client connector takes on one connection before grpc-js gets the socket. */
export type ConnectPhase = 'handshake' | 'server-verification' | 'client-evidence';

/** Node errno codes that mean the peer or the network dropped the connection. */
const CONNECTION_LOST_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT', 'ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ERR_STREAM_DESTROYED']);
/** OpenSSL error codes Node reports for an alert the peer sent (e.g. ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED). */
const TLS_ALERT_CODE = /^ERR_SSL_(?:TLSV1|TLSV13|SSLV3)_ALERT_[A-Z0-9_]+$/;

/**
 * Turns a socket 'error' into a typed AtlsError: a TLS alert from the peer is TLS_ALERT (a
 * verdict: the peer refuses us), a dropped connection is CONNECTION_LOST (retryable), anything
 * else in the handshake HANDSHAKE_FAILED. `details` carry the phase and Node's error code only.
 */
export function classifySocketError(err: unknown, phase: ConnectPhase): AtlsError {
  if (err instanceof AtlsError) return err;
  const code = typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : undefined;
  const msg = err instanceof Error ? err.message.split('\n')[0]! : String(err);
  const details = { phase, ...(code ? { errorCode: code } : {}) };
  if (code && TLS_ALERT_CODE.test(code)) return new AtlsError('TLS_ALERT', `${phase}: peer sent TLS alert ${code}`, { cause: err, details });
  if (code && CONNECTION_LOST_CODES.has(code)) return new AtlsError('CONNECTION_LOST', `${phase}: connection lost (${code})`, { cause: err, details });
  return new AtlsError('HANDSHAKE_FAILED', `${phase}: ${msg}`, { cause: err, details });
}

/** Every connect-phase failure names its phase in `details.phase` (for logs and tests). */
function withPhase(err: unknown, phase: ConnectPhase): unknown {
  if (!(err instanceof AtlsError) || err.details.phase !== undefined) return err;
  return new AtlsError(err.code, err.message, { cause: err.cause, details: { ...err.details, phase } });
}

/**
 * Owns the error and close events of a client connection while the aTLS connector works on it.
 * Node throws an 'error' event nobody listens to as an uncaught exception, so from the first byte
 * to the hand-over to grpc-js some listener must exist on every socket of the connection; the
 * guard also keeps a silent sink afterwards (grpc-js and HTTP/2 add their own handlers, which
 * still see every error). A lost connection aborts `signal`, so a running verification or
 * issuance stops waiting at once and the connector reports CONNECTION_LOST instead.
 */
export class ConnectionGuard {
  readonly #abort = new AbortController();
  readonly #sockets: Socket[] = [];
  #phase: ConnectPhase = 'handshake';
  #released = false;

  constructor(raw: Socket) {
    this.watch(raw);
  }

  /** Aborted (reason: the typed loss) when the connection fails before release. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** The loss, once the connection failed. */
  get lost(): AtlsError | undefined {
    return this.#abort.signal.aborted ? (this.#abort.signal.reason as AtlsError) : undefined;
  }

  /** Adds a socket of this connection (the TLS socket wrapping the raw one). */
  watch(socket: Socket): void {
    this.#sockets.push(socket);
    socket.on('error', this.#onError);
    socket.once('close', this.#onClose);
  }

  /**
   * Runs one phase: resolves with its result, or rejects with the loss as soon as the connection
   * fails, or with `timeout()` when `timeoutMs` passes first. `run` gets a signal aborted in both cases.
   */
  async phase<T>(phase: ConnectPhase, timeoutMs: number, timeout: () => AtlsError, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    this.#phase = phase;
    this.#abort.signal.throwIfAborted();
    const local = new AbortController();
    let onLost = (): void => undefined;
    let timer: NodeJS.Timeout | undefined;
    const stop = new Promise<never>((_, reject) => {
      onLost = () => {
        local.abort(this.lost);
        reject(this.lost);
      };
      this.#abort.signal.addEventListener('abort', onLost, { once: true });
      timer = setTimeout(() => {
        const err = timeout();
        local.abort(err);
        reject(err);
      }, timeoutMs);
    });
    try {
      return await Promise.race([run(local.signal), stop]);
    } catch (err) {
      throw withPhase(err, phase);
    } finally {
      clearTimeout(timer);
      this.#abort.signal.removeEventListener('abort', onLost);
    }
  }

  /** Hands the connection over: close no longer counts as a loss; errors still land in a sink. */
  release(): void {
    this.#released = true;
    for (const s of this.#sockets) s.off('close', this.#onClose);
  }

  readonly #onError = (err: Error): void => {
    if (this.#released) return void nameMidCallLoss(err);
    if (this.#abort.signal.aborted) return;
    this.#abort.abort(classifySocketError(err, this.#phase));
  };

  readonly #onClose = (): void => {
    if (this.#released || this.#abort.signal.aborted) return;
    this.#abort.abort(new AtlsError('CONNECTION_LOST', `${this.#phase}: connection closed by the peer`, { details: { phase: this.#phase } }));
  };
}

/**
 * After the hand-over, a socket error ends the calls on the connection with its message as the
 * status details (grpc-js). The guard's listener runs before grpc-js's, so it names the loss in
 * the message: callers then see `[CONNECTION_LOST]`, retryable, at once (docs/adr/0029).
 */
function nameMidCallLoss(err: Error): void {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string' || !CONNECTION_LOST_CODES.has(code) || err.message.startsWith('[CONNECTION_LOST]')) return;
  err.message = `[CONNECTION_LOST] connection lost during a call (${code}): ${err.message}`;
}
