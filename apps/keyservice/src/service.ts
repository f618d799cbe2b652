import * as grpc from '@grpc/grpc-js';
import { ClusterKms, type MasterSecret } from '@asterism/crypto';
import type { Logger } from '@asterism/logger';
import { kms } from '@asterism/proto';
import { AggregatorRegistry } from 'prom-client';
import { GrpcServer, PEER_STREAM_LIMITS, ServiceMetrics, type MetricsEndpoint } from '@asterism/service-runtime';
import { KeyServiceServer } from './server.js';
import { guardUtf8 } from './utf8-guard.js';

/** A running keyservice. */
export interface RunningKeyService {
  port: number;
  metricsPort: number | undefined;
  stop(graceMs?: number): Promise<void>;
}

/** Starts the gRPC server (kms.API + health) and the metrics endpoint. */
export async function startKeyService(options: {
  masterSecret: MasterSecret;
  host: string;
  port: number;
  metricsPort: number;
  /** True in a node:cluster worker: the primary collects this worker's metrics over IPC. */
  clusterWorker?: boolean;
  logger: Logger;
}): Promise<RunningKeyService> {
  const metrics = new ServiceMetrics('keyservice');
  if (options.clusterWorker) {
    AggregatorRegistry.setRegistries([metrics.registry]);
    // Constructing one installs prom-client's IPC responder for the primary's metric requests.
    new AggregatorRegistry();
  }
  const grpcServer = new GrpcServer({
    logger: options.logger,
    metrics,
    healthServices: ['kms.API'],
    maxReceiveMessageLength: 64 * 1024,
    // Thousands of calls per second: one info line each would cost more than the derivation.
    // Failures are still logged (warn/error) and every call is counted and timed in the metrics.
    okCallLogLevel: 'debug',
    // Cluster-internal, plaintext: its one client (the joinservice) multiplexes every join's key
    // requests over one long-lived channel, so no stream cap; the arrival deadline still applies.
    streamLimits: { maxConcurrentStreams: 'unbounded', requestArrivalMs: PEER_STREAM_LIMITS.requestArrivalMs },
    // channelz per-call bookkeeping is the most expensive step grpc-js adds; nothing reads it here.
    serverOptions: { 'grpc.enable_channelz': 0 },
  });
  const handler = new KeyServiceServer(new ClusterKms(options.masterSecret), options.logger);
  // GetDataKeyRequest field 1 is data_key_id.
  grpcServer.server.addService(guardUtf8(kms.APIService, { getDataKey: [1] }), handler.handlers() as unknown as grpc.UntypedServiceImplementation);
  const port = await grpcServer.listen(options.host, options.port, grpc.ServerCredentials.createInsecure());
  let metricsEndpoint: MetricsEndpoint | undefined;
  if (options.metricsPort >= 0) metricsEndpoint = await metrics.listen(options.host, options.metricsPort);
  if (options.clusterWorker) options.logger.debug('keyservice worker serving', { host: options.host, port });
  else options.logger.info('keyservice serving', { host: options.host, port, metricsPort: metricsEndpoint?.port });
  return {
    port,
    metricsPort: metricsEndpoint?.port,
    async stop(graceMs = 10_000) {
      await grpcServer.stop(graceMs);
      await metricsEndpoint?.close();
    },
  };
}
