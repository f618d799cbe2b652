/**
 * The attestation issuer of a node for its variant (qemu-vtpm, the cloud vTPM variants of
 * docs/protocol/cloud-vtpm-variants.md, dummy), over the node's shared TPM. The cloud variants
 * talk to their platform's metadata endpoints (link-local) when they issue, not before.
 */
import { readFile } from 'node:fs/promises';
import { AwsNitroTpmIssuer, AzureTrustedLaunchIssuer, DummyIssuer, GcpSevEsIssuer, QemuVtpmIssuer, type Issuer, type Variant } from '@asterism/attestation';
import type { TpmClient } from '@asterism/tpm';

/** Where the kernel exposes the firmware's TCG event log. */
export const FIRMWARE_EVENT_LOG_PATH = '/sys/kernel/security/tpm0/binary_bios_measurements';

/** The firmware event log, empty when the kernel exposes none (gcp-sev-es needs it for its platform check). */
export function firmwareEventLog(path = FIRMWARE_EVENT_LOG_PATH): () => Promise<Buffer> {
  return () => readFile(path).catch(() => Buffer.alloc(0));
}

/** The issuer for `variant`; an Error naming the supported variants for the others. */
export function issuerFor(variant: Variant, openTpm: () => Promise<TpmClient>, eventLog: () => Promise<Buffer> = firmwareEventLog()): Issuer {
  switch (variant.name) {
    case 'qemu-vtpm':
      return new QemuVtpmIssuer(openTpm);
    case 'azure-trustedlaunch':
      return new AzureTrustedLaunchIssuer(openTpm, { eventLog });
    case 'aws-nitro-tpm':
      return new AwsNitroTpmIssuer(openTpm, undefined, eventLog);
    case 'gcp-sev-es':
      return new GcpSevEsIssuer(openTpm, undefined, eventLog);
    case 'dummy':
      return new DummyIssuer();
    default:
      throw new Error(`attestation variant ${variant.name} has no issuer in this build (qemu-vtpm, azure-trustedlaunch, aws-nitro-tpm, gcp-sev-es, dummy)`);
  }
}
