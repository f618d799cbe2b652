import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { statusName, type CallObserver } from '@asterism/logger';

/** Prometheus registry plus the gRPC server metrics every Asterism service exposes. */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly #calls: Counter<'method' | 'code'>;
  readonly #duration: Histogram<'method'>;

  constructor(prefix: string, options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: `${prefix}_` });
    this.#calls = new Counter({
      name: `${prefix}_grpc_server_handled_total`,
      help: 'Finished gRPC calls by method and status code.',
      labelNames: ['method', 'code'],
      registers: [this.registry],
    });
    this.#duration = new Histogram({
      name: `${prefix}_grpc_server_handling_seconds`,
      help: 'gRPC call latency by method.',
      labelNames: ['method'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [this.registry],
    });
  }

  /** Hook for loggingInterceptor: counts and times every finished call. */
  readonly observeCall: CallObserver = ({ method, code, durationMs }) => {
    this.#calls.inc({ method, code: statusName(code as grpc.status) });
    this.#duration.observe({ method }, durationMs / 1000);
  };

  /** Serves `GET /metrics` (text exposition format) on host:port; port 0 picks a free port. */
  async listen(host: string, port: number): Promise<MetricsEndpoint> {
    const server = createServer((req, res) => {
      if (req.method === 'GET' && (req.url === '/metrics' || req.url?.startsWith('/metrics?'))) {
        this.registry
          .metrics()
          .then((body) => {
            res.writeHead(200, { 'content-type': this.registry.contentType });
            res.end(body);
          })
          .catch(() => {
            res.writeHead(500).end('metrics collection failed\n');
          });
        return;
      }
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics\n');
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    return new MetricsEndpoint(server);
  }
}

/** A running metrics HTTP listener. */
export class MetricsEndpoint {
  constructor(private readonly server: Server) {}
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
