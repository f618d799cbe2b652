import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { loggingInterceptor, type Logger } from '@asterism/logger';
import type { ServiceMetrics } from './metrics.js';
import { requestGuard } from './request-guard.js';

/** Per-connection stream limits of the server shape (docs/adr/0027). */
export interface StreamLimits {
  /** HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS: streams beyond it are refused by HTTP/2 itself; 'unbounded' = no cap. */
  maxConcurrentStreams: number | 'unbounded';
  /** A stream's request must arrive (message and half-close) within this many ms once the server reads it. */
  requestArrivalMs: number;
}

/**
 * The limits of every server exposed to peers (aTLS and the verification service): a client of
 * these APIs uses one or two streams per connection and sends a request of a few KiB at once, so
 * 32 streams and 5 s leave room for it while a peer holding half-open streams holds 32 per
 * connection for 5 s each.
 */
export const PEER_STREAM_LIMITS = { maxConcurrentStreams: 32, requestArrivalMs: 5_000 } as const satisfies StreamLimits;

/** Options for a gRPC server with logging, metrics, stream limits and (optionally) grpc.health.v1. */
export interface GrpcServerOptions {
  logger: Logger;
  metrics?: ServiceMetrics;
  /** Fully qualified service names reported by grpc.health.v1, e.g. `kms.API`; absent = no health service. */
  healthServices?: string[];
  /** Stream cap and request arrival deadline; default {@link PEER_STREAM_LIMITS}. */
  streamLimits?: StreamLimits;
  /** Largest accepted request message in bytes. */
  maxReceiveMessageLength?: number;
  /** Extra interceptors that run after logging (e.g. attestation gates). */
  interceptors?: grpc.ServerInterceptor[];
  /** Level of the per-call line for successful calls (loggingInterceptor `okLevel`, default info). */
  okCallLogLevel?: 'info' | 'debug';
  /**
   * Level of the per-call line for failed calls (loggingInterceptor `failLevel`): by status code
   * (default) or debug, for servers whose handlers log their own outcomes, aggregated under a flood.
   */
  failedCallLogLevel?: 'by-code' | 'debug';
  /** Extra grpc-js server options. */
  serverOptions?: grpc.ServerOptions;
}

/**
 * The one server shape of every Asterism gRPC server (docs/adr/0027): a grpc-js server with the
 * request guard (arrival deadline, no per-stream log lines), the logging interceptor (one line per
 * call, join id), the service's interceptors (e.g. an aTLS gate), call metrics, a stream cap, and a
 * health service where the server has one. Handlers throw typed errors; `toStatus` answers them.
 */
export class GrpcServer {
  readonly server: grpc.Server;
  readonly health: HealthImplementation | undefined;
  readonly #services: string[];
  readonly #logger: Logger;

  constructor(options: GrpcServerOptions) {
    this.#logger = options.logger;
    this.#services = options.healthServices ?? [];
    const limits = options.streamLimits ?? PEER_STREAM_LIMITS;
    this.server = new grpc.Server({
      'grpc.max_receive_message_length': options.maxReceiveMessageLength ?? 4 * 1024 * 1024,
      ...(limits.maxConcurrentStreams === 'unbounded' ? {} : { 'grpc.max_concurrent_streams': limits.maxConcurrentStreams }),
      ...(options.serverOptions ?? {}),
      interceptors: [
        requestGuard({ arrivalMs: limits.requestArrivalMs, logger: options.logger, ...(options.metrics ? { observe: options.metrics.observeCall } : {}) }),
        loggingInterceptor(options.logger, options.metrics?.observeCall, { okLevel: options.okCallLogLevel ?? 'info', failLevel: options.failedCallLogLevel ?? 'by-code' }),
        ...(options.interceptors ?? []),
      ],
    });
    if (options.healthServices) {
      this.health = new HealthImplementation({ '': 'NOT_SERVING', ...Object.fromEntries(this.#services.map((s) => [s, 'NOT_SERVING'])) });
      this.health.addToServer(this.server);
    }
  }

  /** Binds host:port (port 0 = free port; an IPv6 host may come with or without brackets) and marks every service SERVING. */
  async listen(host: string, port: number, credentials: grpc.ServerCredentials): Promise<number> {
    return this.bind(`${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`, credentials);
  }

  /** Binds a grpc-js address (`host:port`) and marks every service SERVING; resolves with the bound port. */
  async bind(address: string, credentials: grpc.ServerCredentials): Promise<number> {
    const bound = await new Promise<number>((resolve, reject) => this.server.bindAsync(address, credentials, (err, p) => (err ? reject(err) : resolve(p))));
    this.setServing(true);
    return bound;
  }

  /** Stops accepting calls and resolves once the running ones have finished (no grace deadline). */
  drain(): Promise<void> {
    this.setServing(false);
    return new Promise<void>((resolve) => this.server.tryShutdown(() => resolve()));
  }

  /** Flips every health status. */
  setServing(serving: boolean): void {
    const status = serving ? 'SERVING' : 'NOT_SERVING';
    if (!this.health) return;
    this.health.setStatus('', status);
    for (const s of this.#services) this.health.setStatus(s, status);
  }

  /**
   * Graceful stop: health goes NOT_SERVING, in-flight calls finish, new ones are refused.
   * After `graceMs` remaining calls are cancelled.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.setServing(false);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#logger.warn('graceful shutdown timed out, cancelling remaining calls', { graceMs });
        this.server.forceShutdown();
        resolve();
      }, graceMs);
      timer.unref();
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
