/** The verification service this process serves for its node (docs/protocol/verification.md). */
import type { Issuer } from '@asterism/attestation';
import type { Logger } from '@asterism/logger';
import type { BootstrapperConfig } from '../flags.js';
import { nodePlatformFor } from '../platform.js';
import { PerCallIssuer } from './per-call-issuer.js';
import { VerificationService } from './verification-service.js';

/** An issuer with a platform (TPM connection) of its own per document (the node's TPM stays free). */
export function perCallIssuer(cfg: BootstrapperConfig, bootIssuer: Issuer): Issuer {
  return new PerCallIssuer(bootIssuer.variant, () => {
    const platform = nodePlatformFor(cfg, () => undefined);
    return { issuer: platform.issuer, close: () => platform.close() };
  });
}

/** The node's verification service, served by this process (docs/protocol/verification.md; 0 = off). */
export async function startVerificationService(cfg: BootstrapperConfig, issuer: Issuer, logger: Logger): Promise<VerificationService | undefined> {
  if (cfg.verifyGrpcPort === 0) return undefined;
  const service = new VerificationService(issuer, logger);
  try {
    const ports = await service.listen(cfg.initHost, { grpc: cfg.verifyGrpcPort, http: cfg.verifyHttpPort });
    logger.info('verification service serving', ports);
    return service;
  } catch (err) {
    logger.warn('verification service not started', { err });
    await service.close().catch(() => undefined);
    return undefined;
  }
}
