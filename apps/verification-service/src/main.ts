#!/usr/bin/env node
/**
 * verification-service entry point: the node's verification service alone
 * (docs/protocol/verification.md), as the asterism-services chart runs it in a DaemonSet pod on
 * every node (docs/adr/0028-verification-service-on-real-nodes.md). flags -> the node's
 * platform for its variant (@asterism/node-platform, shared with the bootstrapper), opened per
 * document (PerCallIssuer) -> VerificationService on gRPC + HTTP -> SIGTERM. Bundled by
 * deploy/src/bundle.ts into the `verification-service` image.
 */
import { createLogger, levelFromVerbosity } from '@asterism/logger';
import { handleShutdownSignals, parseFlagsOrExit } from '@asterism/service-runtime';
import { parseVerifyFlags, VERIFY_USAGE } from './flags.js';
import { perCallIssuer } from './start.js';
import { VerificationService } from './verification-service.js';

async function main(): Promise<void> {
  const config = parseFlagsOrExit('verification-service', VERIFY_USAGE, () => parseVerifyFlags(process.argv.slice(2)));
  if (config === null) return;
  const logger = createLogger({ component: 'verification-service', level: levelFromVerbosity(config.verbosity) });
  const issuer = perCallIssuer(config, (count) => logger.warn('flushed transient TPM objects another TPM user left behind', { count }));
  const service = new VerificationService(issuer, logger);
  const ports = await service.listen(config.host, { grpc: config.grpcPort, http: config.httpPort });
  logger.info('verification service serving', { variant: config.variant.name, tpm: config.tpm, ...ports });
  handleShutdownSignals(logger, () => service.close());
}

main().catch((err: unknown) => {
  process.stderr.write(`verification-service: fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
