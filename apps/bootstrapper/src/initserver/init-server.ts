import * as grpc from '@grpc/grpc-js';
import type { Logger } from '@asterism/logger';
import { init } from '@asterism/proto';
import { GrpcServer, goStatusText, PeerRateLimiter, RefusalLog, toStatus, type RpcStatus } from '@asterism/service-runtime';
import { chunkLogs, InitFailure, type InitFailureCode, type InitFlow } from './init-flow.js';
import type { LogSource } from '../host/ports.js';

/** The InitServer's answer table; LOCK_FAILED, STEP_FAILED and DISK_BOUND_TO_OTHER_IDENTITY are this node's or cluster's faults (Internal). */
const STATUS_OF: Record<InitFailureCode, grpc.status> = {
  INIT_SECRET_INVALID: grpc.status.PERMISSION_DENIED,
  INVALID_REQUEST: grpc.status.INVALID_ARGUMENT,
  ALREADY_ACTIVATING: grpc.status.FAILED_PRECONDITION,
  TOO_MANY_ATTEMPTS: grpc.status.RESOURCE_EXHAUSTED,
  LOCK_FAILED: grpc.status.INTERNAL,
  STEP_FAILED: grpc.status.INTERNAL,
  DISK_BOUND_TO_OTHER_IDENTITY: grpc.status.INTERNAL,
};

/** How the init attempt ended, for the bootstrapper's reboot/reset decision. */
export type InitOutcome = { kind: 'none' } | { kind: 'succeeded' } | { kind: 'failed-after-lock'; error: string };

/** Options of the InitServer. */
export interface InitServerOptions {
  /**
   * Init attempts per client address; a call takes a token before the secret check and gets it
   * back when the secret matches, so only wrong secrets count. Default: 5 at once, one more every 2 s.
   */
  secretAttempts?: PeerRateLimiter;
  /** Lines for wrong secrets and limit refusals: one per reason and interval (docs/adr/0029). */
  refusalLog?: RefusalLog;
}

/**
 * init.API over aTLS (server attestation only). Streams `init_success`, or `init_failure`
 * followed by the node's logs in 1 KiB chunks, then ends the call with the failure's status
 * (FailedPrecondition when the node is already being activated, PermissionDenied for a wrong
 * init secret, InvalidArgument for bad requests, Internal for failures of this node). The logs
 * go only to a caller that proved the init secret; failed secret attempts are rate limited per
 * address (ResourceExhausted, before the bcrypt check), see docs/adr/0007.
 */
export class InitServer {
  readonly server: grpc.Server;
  readonly #shape: GrpcServer;
  #running = 0;
  #idle: (() => void) | undefined;
  #stopping = false;
  #outcome: InitOutcome = { kind: 'none' };
  #stopped: Promise<void> | undefined;
  #onStopped!: () => void;
  readonly #stoppedDone = new Promise<void>((resolve) => (this.#onStopped = resolve));
  readonly #attempts: PeerRateLimiter;
  readonly #refusalLog: RefusalLog;
  #refused = 0;

  constructor(
    private readonly flow: InitFlow,
    private readonly logs: LogSource,
    private readonly logger: Logger,
    serverOptions: grpc.ServerOptions = {},
    options: InitServerOptions = {},
  ) {
    this.#attempts = options.secretAttempts ?? new PeerRateLimiter(0.5, 5);
    this.#refusalLog = options.refusalLog ?? new RefusalLog(logger, 'init refused');
    // The one server shape (docs/adr/0027): no health service (the reference's InitServer has none).
    // Call lines at debug: the handler logs each outcome itself, refusals once per 100.
    this.#shape = new GrpcServer({ logger, okCallLogLevel: 'debug', failedCallLogLevel: 'debug', serverOptions: { 'grpc.keepalive_time_ms': 15_000, ...serverOptions } });
    this.server = this.#shape.server;
    this.server.addService(init.APIService, { init: (call: grpc.ServerWritableStream<init.InitRequest, init.InitResponse>) => void this.handle(call) });
  }

  /** Binds and serves; resolves with the bound port. */
  async listen(address: string, credentials: grpc.ServerCredentials): Promise<number> {
    return this.#shape.bind(address, credentials);
  }

  /** Binds `address` and resolves once the server has been stopped (see {@link stop}). */
  async serve(address: string, credentials: grpc.ServerCredentials): Promise<void> {
    const port = await this.listen(address, credentials);
    // The node waits for init from here on (the image's boot-time probe stops at this line).
    this.logger.info('init server listening', { address, port });
    await this.#stoppedDone;
  }

  /** Init calls refused by the per-address secret attempt limit so far. */
  get refusedAttempts(): number {
    return this.#refused;
  }

  /** What happened to the (single) init attempt that locked the node. */
  get outcome(): InitOutcome {
    return this.#outcome;
  }

  private async handle(call: grpc.ServerWritableStream<init.InitRequest, init.InitResponse>): Promise<void> {
    if (this.#stopping) {
      // The server only stops once the node is locked (by an init or a join): the node will never
      // accept an init again, so say so instead of UNAVAILABLE, which clients would retry.
      call.emit('error', toStatus(new InitFailure('ALREADY_ACTIVATING', 'node is already being activated'), STATUS_OF));
      return;
    }
    const peer = call.getPeer();
    if (!this.#attempts.take(peer)) {
      // Aggregated: a flood must not turn into a flood of log lines.
      this.#refused++;
      this.#refusalLog.refused('TOO_MANY_ATTEMPTS', { peer });
      const refusal = new InitFailure('TOO_MANY_ATTEMPTS', `too many failed init attempts from this address; retry in ${this.#attempts.retryAfterSeconds(peer)} s`);
      call.emit('error', toStatus(refusal, STATUS_OF));
      return;
    }
    this.#running++;
    const abort = new AbortController();
    call.on('cancelled', () => abort.abort());
    let secretVerified = false;
    try {
      this.logger.debug('init request received', { peer });
      const success = await this.flow.run(call.request, abort.signal, {
        onSecretVerified: () => {
          this.logger.info('init request received: init secret verified', { peer });
          secretVerified = true;
          this.#attempts.refund(peer);
        },
      });
      this.#outcome = { kind: 'succeeded' };
      await write(call, { initSuccess: success });
      call.end();
    } catch (err) {
      const failure = err instanceof InitFailure ? err : new InitFailure('STEP_FAILED', `init: ${(err as Error).message}`, { cause: err });
      if (failure.afterLock) this.#outcome = { kind: 'failed-after-lock', error: failure.message };
      // A wrong secret is an unauthenticated caller's refusal, not a failure of this node: aggregated (docs/adr/0029).
      if (failure.code === 'INIT_SECRET_INVALID') this.#refusalLog.refused(failure.code, { peer });
      else this.logger.error('init failed', { code: failure.code, err: failure, afterLock: failure.afterLock });
      // A caller that proved the init secret gets the node's logs below, so the internal cause's
      // message is no secret to it (the reference sends it too); anyone else gets the generic text.
      await this.sendFailure(call, toStatus(failure, STATUS_OF, { revealInternal: secretVerified }), secretVerified);
    } finally {
      this.#running--;
      if (this.#running === 0) this.#idle?.();
    }
  }

  private async sendFailure(call: grpc.ServerWritableStream<init.InitRequest, init.InitResponse>, status: RpcStatus, withLogs: boolean): Promise<void> {
    let final = status;
    try {
      // init_failure.error carries Go's rendering of the final status (what the reference's CLI prints).
      await write(call, { initFailure: { error: goStatusText(status.code, status.details) } });
      if (withLogs) for await (const chunk of chunkLogs(this.logs)) await write(call, { log: { log: chunk } });
    } catch (err) {
      // Only a caller that proved the secret gets logs, so it may read this internal cause too.
      final = toStatus(new InitFailure('STEP_FAILED', `${status.details}; sending logs: ${(err as Error).message}`, { cause: err }), STATUS_OF, { revealInternal: true });
    }
    call.emit('error', final);
  }

  /** Waits for running Init calls, then stops serving (graceful). Idempotent. */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      this.#stopping = true;
      if (this.#running > 0) await new Promise<void>((r) => (this.#idle = r));
      await this.#shape.drain();
      this.logger.info('init server stopped');
      this.#onStopped();
    })();
    return this.#stopped;
  }
}

function write(call: grpc.ServerWritableStream<init.InitRequest, init.InitResponse>, msg: init.InitResponse): Promise<void> {
  return new Promise((resolve, reject) => {
    if (call.cancelled) return reject(new InitFailure('STEP_FAILED', 'init: client went away'));
    call.write(msg, (err?: Error | null) => (err ? reject(err) : resolve()));
  });
}
