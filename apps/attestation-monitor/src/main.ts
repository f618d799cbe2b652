#!/usr/bin/env node
/**
 * attestation-monitor entry point (docs/protocol/continuous-attestation.md): flags -> Kubernetes
 * clients -> cluster ID (given, or derived through the keyservice) -> the validator's outside sources
 * (collateral caches, as the joinservice's) -> monitor (join-config inputs, node checker, Node
 * status, quarantine) -> Lease election loop + metrics -> SIGTERM.
 */
import * as grpc from '@grpc/grpc-js';
import * as k8s from '@kubernetes/client-node';
import { clientsFromKubeconfigFile, clientsInCluster, type KubeClients } from '@asterism/k8s';
import { createLogger, levelFromVerbosity, type Logger } from '@asterism/logger';
import { AttestationMonitor, BoundDisks, DenyListStore, endpointOf, GrpcAttestationSource, MonitorMetrics, NodeChecker, NodeStatusWriter, Quarantine } from '@asterism/node-attestation';
import { kms } from '@asterism/proto';
import { fromStatus, handleShutdownSignals, parseFlagsOrExit, ServiceMetrics } from '@asterism/service-runtime';
import { CollateralCounts, registerCollateralMetrics } from '@asterism/validator-sources';
import { parseFlags, USAGE, type MonitorConfig } from './flags.js';
import { deriveClusterIdFrom, JoinConfigInputs, type DataKeySource } from './inputs.js';
import { DEFAULT_LEASE_TIMING, LeaseElector } from './lease-elector.js';
import { MonitorLoop } from './monitor-loop.js';
import { monitorValidatorFactory } from './validator.js';

/** The keyservice's GetDataKey over plaintext gRPC (cluster-internal), one call. */
function keyService(endpoint: string, timeoutMs: number): DataKeySource & { close(): void } {
  const client = new kms.APIClient(endpoint, grpc.credentials.createInsecure());
  return {
    getDataKey: (id, length) =>
      new Promise((resolve, reject) =>
        client.getDataKey({ dataKeyId: id, length }, new grpc.Metadata({ waitForReady: true }), { deadline: Date.now() + timeoutMs }, (err, res) => (err ? reject(fromStatus(err)) : resolve(res.dataKey))),
      ),
    close: () => client.close(),
  };
}

/** The cluster ID: given by flag, or derived (retried until the keyservice answers). */
async function clusterId(cfg: MonitorConfig, inputs: JoinConfigInputs, logger: Logger): Promise<Buffer> {
  if (cfg.clusterId) return cfg.clusterId;
  const keys = keyService(cfg.keyServiceEndpoint, 30_000);
  try {
    for (;;) {
      try {
        return await deriveClusterIdFrom(keys, inputs);
      } catch (err) {
        logger.warn('deriving the cluster ID failed, retrying in 10 s', { err });
        await new Promise((r) => setTimeout(r, 10_000));
      }
    }
  } finally {
    keys.close();
  }
}

async function main(): Promise<void> {
  const cfg = parseFlagsOrExit('attestation-monitor', USAGE, () => parseFlags(process.argv.slice(2)));
  if (cfg === null) return;
  const logger = createLogger({ component: 'attestation-monitor', level: levelFromVerbosity(cfg.verbosity) });
  const clients: KubeClients = cfg.kubeconfig ? clientsFromKubeconfigFile(cfg.kubeconfig) : clientsInCluster();
  const inputs = new JoinConfigInputs(clients.core, cfg.namespace);
  const id = await clusterId(cfg, inputs, logger);
  logger.info('cluster ID known', { clusterId: id.toString('base64') });
  const service = new ServiceMetrics('attestation_monitor');
  const metrics = new MonitorMetrics(service.registry);
  const collateralCounts = new CollateralCounts();
  registerCollateralMetrics(service.registry, 'attestation_monitor', collateralCounts);
  const buildValidator = await monitorValidatorFactory({ sources: cfg.sources, clients, logger, collateralCounts });
  const status = new NodeStatusWriter(clients.core);
  const monitor = new AttestationMonitor({
    inputs,
    nodes: status,
    quarantine: new Quarantine(status, new DenyListStore(clients.core), new BoundDisks(clients.core)),
    checker: new NodeChecker({ source: new GrpcAttestationSource(), clusterId: id, timeoutMs: cfg.timeoutMs }),
    buildValidator,
    endpointOf: endpointOf(cfg.verifyPort),
    metrics,
    logger,
    graceMs: cfg.graceMs,
    concurrency: cfg.concurrency,
  });
  const elector = new LeaseElector(clients.config.makeApiClient(k8s.CoordinationV1Api), { namespace: cfg.namespace, name: cfg.leaseName }, cfg.identity);
  const loop = new MonitorLoop(elector, monitor, metrics, logger, { intervalMs: cfg.intervalMs, jitter: cfg.jitter, retryMs: DEFAULT_LEASE_TIMING.retryMs });
  const endpoint = cfg.metricsPort >= 0 ? await service.listen('0.0.0.0', cfg.metricsPort) : undefined;
  loop.start();
  logger.info('attestation monitor started', { variant: cfg.variant.name, intervalS: cfg.intervalMs / 1000, graceS: cfg.graceMs / 1000, identity: cfg.identity, metricsPort: endpoint?.port });
  handleShutdownSignals(logger, async () => {
    await loop.stop();
    await endpoint?.close();
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`attestation-monitor: fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
