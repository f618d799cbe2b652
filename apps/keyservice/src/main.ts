#!/usr/bin/env node
/** keyservice entry point: flags -> master secret files -> gRPC + health + metrics -> SIGTERM. */
import { createLogger, levelFromVerbosity, SecretRegistry } from '@asterism/logger';
import { handleShutdownSignals, parseFlagsOrExit } from '@asterism/service-runtime';
import { parseFlags, USAGE } from './flags.js';
import { loadMasterSecret } from './master-secret.js';
import { startKeyService } from './service.js';

async function main(): Promise<void> {
  const config = parseFlagsOrExit('keyservice', USAGE, () => parseFlags(process.argv.slice(2)));
  if (config === null) return;
  const secrets = new SecretRegistry();
  const logger = createLogger({ component: 'keyservice', level: levelFromVerbosity(config.verbosity), secrets });
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
  const service = await startKeyService({ masterSecret, host: config.host, port: config.port, metricsPort: config.metricsPort, logger });
  handleShutdownSignals(logger, () => service.stop());
}

main().catch((err: unknown) => {
  process.stderr.write(`keyservice: fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
