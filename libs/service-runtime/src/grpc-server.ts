import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { loggingInterceptor, type Logger } from '@asterism/logger';
import type { ServiceMetrics } from './metrics.js';

/** Options for a gRPC server with logging, metrics and grpc.health.v1. */
export interface GrpcServerOptions {
  logger: Logger;
  metrics?: ServiceMetrics;
  /** Fully qualified service names reported by the health service, e.g. `kms.API`. */
  healthServices: string[];
  /** Largest accepted request message in bytes. */
  maxReceiveMessageLength?: number;
  /** Extra interceptors that run after logging (e.g. attestation gates). */
  interceptors?: grpc.ServerInterceptor[];
  /** Level of the per-call line for successful calls (loggingInterceptor `okLevel`, default info). */
  okCallLogLevel?: 'info' | 'debug';
  /** Extra grpc-js server options. */
  serverOptions?: grpc.ServerOptions;
}

/** A grpc-js server wired with the standard Asterism interceptors and a health service. */
export class GrpcServer {
  readonly server: grpc.Server;
  readonly health: HealthImplementation;
  readonly #services: string[];
  readonly #logger: Logger;

  constructor(options: GrpcServerOptions) {
    this.#logger = options.logger;
    this.#services = options.healthServices;
    this.server = new grpc.Server({
      'grpc.max_receive_message_length': options.maxReceiveMessageLength ?? 4 * 1024 * 1024,
      ...(options.serverOptions ?? {}),
      interceptors: [loggingInterceptor(options.logger, options.metrics?.observeCall, { okLevel: options.okCallLogLevel ?? 'info' }), ...(options.interceptors ?? [])],
    });
    this.health = new HealthImplementation({ '': 'NOT_SERVING', ...Object.fromEntries(this.#services.map((s) => [s, 'NOT_SERVING'])) });
    this.health.addToServer(this.server);
  }

  /** Binds host:port (port 0 = free port) with the given credentials and marks every service SERVING. */
  async listen(host: string, port: number, credentials: grpc.ServerCredentials): Promise<number> {
    const bound = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync(`${host}:${port}`, credentials, (err, p) => (err ? reject(err) : resolve(p))),
    );
    this.setServing(true);
    return bound;
  }

  /** Flips every health status. */
  setServing(serving: boolean): void {
    const status = serving ? 'SERVING' : 'NOT_SERVING';
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
