/** The simulated node's verification service (docs/protocol/verification.md), served by its bootstrapper process. */
import type { Issuer } from '@asterism/attestation';
import type { Logger } from '@asterism/logger';
import { VerificationService } from '@asterism/verification-service';

/** Starts the verification service on `host` (gRPC port 0 = off); a failure to listen is logged, not fatal. */
export async function startVerificationService(at: { host: string; grpcPort: number; httpPort: number }, issuer: Issuer, logger: Logger): Promise<VerificationService | undefined> {
  if (at.grpcPort === 0) return undefined;
  const service = new VerificationService(issuer, logger);
  try {
    const ports = await service.listen(at.host, { grpc: at.grpcPort, http: at.httpPort });
    logger.info('verification service serving', ports);
    return service;
  } catch (err) {
    logger.warn('verification service not started', { err });
    await service.close().catch(() => undefined);
    return undefined;
  }
}
