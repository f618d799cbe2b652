#!/usr/bin/env node
/**
 * keyservice entry point: flags -> master secret files -> gRPC + health + metrics -> SIGTERM.
 * With `--workers N` (N > 1) this process becomes the node:cluster primary (src/cluster.ts) and
 * each worker runs the single-process path below.
 */
import cluster from 'node:cluster';
import { createLogger, levelFromVerbosity, SecretRegistry, type Logger } from '@asterism/logger';
import { handleShutdownSignals, parseFlagsOrExit } from '@asterism/service-runtime';
import { reportListening, runPrimary } from './cluster.js';
import { parseFlags, USAGE, type KeyServiceConfig } from './flags.js';
import { loadMasterSecret } from './master-secret.js';

async function main(): Promise<void> {
  const config = parseFlagsOrExit('keyservice', USAGE, () => parseFlags(process.argv.slice(2)));
  if (config === null) return;
  const secrets = new SecretRegistry();
  const logger = createLogger({ component: 'keyservice', level: levelFromVerbosity(config.verbosity), secrets });
  if (config.workers > 1 && cluster.isPrimary) {
    const primary = await runPrimary(config, logger);
    handleShutdownSignals(logger, () => primary.stop());
    return;
  }
  await serve(config, logger, secrets);
}

/** The serving process: loads the secret itself (it never crosses the cluster IPC channel). */
async function serve(config: KeyServiceConfig, logger: Logger, secrets: SecretRegistry): Promise<void> {
  let masterSecret;
  try {
    masterSecret = await loadMasterSecret(config.masterSecretPath, config.saltPath);
  } catch (err) {
    logger.error('loading master secret failed', { err });
    setImmediate(() => process.exit(1));
    return;
  }
  secrets.register(masterSecret.key);
  secrets.register(masterSecret.salt);
  // Loaded lazily so that a cluster primary never initialises gRPC (smaller resident set).
  const { startKeyService } = await import('./service.js');
  const inCluster = cluster.isWorker;
  const service = await startKeyService({
    masterSecret,
    host: config.host,
    port: config.port,
    // In a cluster the primary serves the aggregated metrics.
    metricsPort: inCluster ? -1 : config.metricsPort,
    clusterWorker: inCluster,
    logger,
  });
  reportListening(service.port);
  handleShutdownSignals(logger, () => service.stop());
}

main().catch((err: unknown) => {
  process.stderr.write(`keyservice: fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
