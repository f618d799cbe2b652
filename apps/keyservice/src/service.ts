import * as grpc from '@grpc/grpc-js';
import { ClusterKms, type MasterSecret } from '@asterism/crypto';
import type { Logger } from '@asterism/logger';
import { kms } from '@asterism/proto';
import { GrpcServer, ServiceMetrics, type MetricsEndpoint } from '@asterism/service-runtime';
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
  logger: Logger;
}): Promise<RunningKeyService> {
  const metrics = new ServiceMetrics('keyservice');
  const grpcServer = new GrpcServer({
    logger: options.logger,
    metrics,
    healthServices: ['kms.API'],
    maxReceiveMessageLength: 64 * 1024,
  });
  const handler = new KeyServiceServer(new ClusterKms(options.masterSecret), options.logger);
  // GetDataKeyRequest field 1 is data_key_id.
  grpcServer.server.addService(guardUtf8(kms.APIService, { getDataKey: [1] }), handler.handlers() as unknown as grpc.UntypedServiceImplementation);
  const port = await grpcServer.listen(options.host, options.port, grpc.ServerCredentials.createInsecure());
  let metricsEndpoint: MetricsEndpoint | undefined;
  if (options.metricsPort >= 0) metricsEndpoint = await metrics.listen(options.host, options.metricsPort);
  options.logger.info('keyservice serving', { host: options.host, port, metricsPort: metricsEndpoint?.port });
  return {
    port,
    metricsPort: metricsEndpoint?.port,
    async stop(graceMs = 10_000) {
      await grpcServer.stop(graceMs);
      await metricsEndpoint?.close();
    },
  };
}
