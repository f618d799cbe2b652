/**
 * Multi-core mode (`--workers N`, N > 1) on node:cluster. The primary only supervises: it forks N
 * workers, each of which loads the master secret files itself and serves gRPC on the shared port
 * (the primary accepts connections and hands them out round-robin), and serves the workers' metrics
 * aggregated on `/metrics`. A worker that dies ends the whole service (exit 1) so the orchestrator
 * restarts it; SIGTERM is passed on to every worker for a graceful stop.
 */
import cluster, { type Worker } from 'node:cluster';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AggregatorRegistry } from 'prom-client';
import type { Logger } from '@asterism/logger';
import type { KeyServiceConfig } from './flags.js';

/** Message a worker sends to the primary once its gRPC port is bound. */
export interface WorkerListening {
  type: 'keyservice-listening';
  port: number;
}

function isListening(msg: unknown): msg is WorkerListening {
  return typeof msg === 'object' && msg !== null && (msg as WorkerListening).type === 'keyservice-listening';
}

/** Tells the primary (if any) that this worker serves on `port`. */
export function reportListening(port: number): void {
  if (cluster.isWorker) process.send?.({ type: 'keyservice-listening', port } satisfies WorkerListening);
}

/** Runs the primary: forks the workers, waits until all listen, serves aggregated metrics. */
export async function runPrimary(config: KeyServiceConfig, logger: Logger): Promise<{ stop(): Promise<void> }> {
  const workers: Worker[] = [];
  let stopping = false;
  const ports = await Promise.all(
    Array.from({ length: config.workers }, () => {
      const worker = cluster.fork();
      workers.push(worker);
      worker.on('exit', (code, signal) => {
        if (stopping) return;
        logger.error('keyservice worker exited, stopping', { workerPid: worker.process.pid, code, signal });
        stopping = true;
        for (const w of workers) if (!w.isDead()) w.kill('SIGTERM');
        setImmediate(() => process.exit(1));
      });
      return new Promise<number>((resolve, reject) => {
        worker.on('message', (msg: unknown) => isListening(msg) && resolve(msg.port));
        worker.once('exit', () => reject(new Error('a keyservice worker exited during start-up')));
      });
    }),
  );
  const metrics = config.metricsPort >= 0 ? await serveAggregatedMetrics(config.host, config.metricsPort) : undefined;
  logger.info('keyservice serving', { host: config.host, port: ports[0], metricsPort: metrics?.port, workers: config.workers });
  return {
    async stop() {
      stopping = true;
      const live = workers.filter((w) => !w.isDead());
      await Promise.all(live.map((w) => new Promise<void>((resolve) => (w.once('exit', () => resolve()), w.kill('SIGTERM')))));
      metrics?.server.close();
    },
  };
}

/** `GET /metrics` on host:port answered with the sum over all workers' registries. */
async function serveAggregatedMetrics(host: string, port: number): Promise<{ port: number; server: ReturnType<typeof createServer> }> {
  const registry = new AggregatorRegistry();
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || !(req.url === '/metrics' || req.url?.startsWith('/metrics?'))) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics\n');
      return;
    }
    registry
      .clusterMetrics()
      .then((body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body))
      .catch((err: unknown) => res.writeHead(500).end(`metrics collection failed: ${err instanceof Error ? err.message : String(err)}\n`));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return { port: (server.address() as AddressInfo).port, server };
}
