/** Starting the verification service (docs/protocol/verification.md) for this process's node. */
import { VtpmIssuer, type Issuer } from '@asterism/attestation';
import type { Logger } from '@asterism/logger';
import type { BootstrapperConfig } from '../flags.js';
import { nodePlatformFor, type NodePlatformConfig } from '../platform.js';
import { PerCallIssuer } from './per-call-issuer.js';
import { VerificationService } from './verification-service.js';

/** Flushes the attestation keys a vTPM issuer keeps loaded (the TPM outlives the connection). */
export async function releaseAttestationKeys(issuer: Issuer): Promise<void> {
  if (issuer instanceof VtpmIssuer) await issuer.releaseAttestationKeys().catch(() => 0);
}

/**
 * An issuer with a platform (TPM connection) of its own per document: opened, used, its
 * attestation key flushed and closed, so the node's TPM (swtpm serves one connection; it has
 * three object slots) stays free between documents. `onLeftoversFlushed` reports transient
 * objects another TPM user left behind.
 */
export function perCallIssuer(cfg: NodePlatformConfig, onLeftoversFlushed: (count: number) => void = () => undefined): PerCallIssuer {
  return new PerCallIssuer(cfg.variant, () => {
    const platform = nodePlatformFor(cfg, onLeftoversFlushed);
    return {
      issuer: platform.issuer,
      close: async () => {
        await releaseAttestationKeys(platform.issuer);
        await platform.close();
      },
    };
  });
}

/** The local-backend node's verification service, served by the bootstrapper (0 = off). */
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
