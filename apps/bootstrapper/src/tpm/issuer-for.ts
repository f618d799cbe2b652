/**
 * The attestation issuer of a node for its variant (qemu-vtpm, the cloud vTPM variants of
 * docs/protocol/cloud-vtpm-variants.md, the SEV-SNP variants, azure-tdx, dummy), over the node's shared TPM
 * (qemu-tdx has no TPM: see ../platform.ts). The cloud variants
 * talk to their platform's metadata endpoints (link-local) when they issue, not before.
 */
import { readFile } from 'node:fs/promises';
import { AwsNitroTpmIssuer, AzureTdxIssuer, AzureTrustedLaunchIssuer, DummyIssuer, GcpSevEsIssuer, ImdsTdQuoteClient, QemuVtpmIssuer, type Issuer, type Variant } from '@asterism/attestation';
import type { TpmClient } from '@asterism/tpm';
import { snpIssuerFor, type NodeInterfaces } from '../attestation/snp-issuers.js';

/** Where the kernel exposes the firmware's TCG event log. */
export const FIRMWARE_EVENT_LOG_PATH = '/sys/kernel/security/tpm0/binary_bios_measurements';

/** The firmware event log, empty when the kernel exposes none (gcp-sev-es needs it for its platform check). */
export function firmwareEventLog(path = FIRMWARE_EVENT_LOG_PATH): () => Promise<Buffer> {
  return () => readFile(path).catch(() => Buffer.alloc(0));
}

function unsupported(message: string): never {
  throw new Error(message);
}

/**
 * The issuer for `variant`; an Error naming the supported variants for the others. `node` says
 * where the SNP and azure-tdx issuers find configfs-tsm (under the state root) and the instance
 * metadata service (THIM, the TD quote endpoint, GCE metadata).
 */
export function issuerFor(variant: Variant, openTpm: () => Promise<TpmClient>, eventLog: () => Promise<Buffer> = firmwareEventLog(), node: NodeInterfaces = { stateRoot: '/' }): Issuer {
  switch (variant.name) {
    case 'qemu-vtpm':
      return new QemuVtpmIssuer(openTpm);
    case 'azure-trustedlaunch':
      return new AzureTrustedLaunchIssuer(openTpm, { eventLog });
    case 'aws-nitro-tpm':
      return new AwsNitroTpmIssuer(openTpm, undefined, eventLog);
    case 'gcp-sev-es':
      return new GcpSevEsIssuer(openTpm, undefined, eventLog);
    case 'azure-tdx':
      return new AzureTdxIssuer(openTpm, { eventLog, ...(node.metadataUrl ? { quotes: new ImdsTdQuoteClient(node.metadataUrl) } : {}) });
    case 'dummy':
      return new DummyIssuer();
    default:
      return (
        snpIssuerFor(variant.name, openTpm, node) ??
        unsupported(`attestation variant ${variant.name} has no TPM issuer in this build (qemu-vtpm, azure-trustedlaunch, aws-nitro-tpm, gcp-sev-es, azure-sev-snp, aws-sev-snp, gcp-sev-snp, azure-tdx, dummy)`)
      );
  }
}
