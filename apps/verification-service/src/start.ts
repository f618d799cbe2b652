/** The verification service's issuer (docs/protocol/verification.md): a TPM connection per document. */
import { nodePlatformFor, releaseAttestationKeys, type NodePlatformConfig } from '@asterism/node-platform';
import { PerCallIssuer } from './per-call-issuer.js';

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
