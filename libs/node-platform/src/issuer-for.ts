/**
 * The attestation issuer of a node for its variant, from the variant's descriptor
 * (libs/attestation variants/table.ts; docs/adr/0035-variant-descriptor-table.md): over the node's
 * shared TPM for the TPM variants; a TD's quote for the TDX variants without a TPM (platform.ts).
 * The cloud variants talk to their platform's metadata endpoints (link-local) when they issue,
 * not before.
 */
import { readFile } from 'node:fs/promises';
import { variantDescriptor, variantDescriptors, type Issuer, type IssuerEnvironment, type Variant } from '@asterism/attestation';
import type { TpmClient } from '@asterism/tpm';

/** Where a node's attestation interfaces are: its paths (under `--state-root`), its metadata service, configfs-tsm. */
export type NodeInterfaces = Omit<IssuerEnvironment, 'openTpm' | 'eventLog'>;

/** Where the kernel exposes the firmware's TCG event log. */
export const FIRMWARE_EVENT_LOG_PATH = '/sys/kernel/security/tpm0/binary_bios_measurements';

/** The firmware event log, empty when the kernel exposes none (gcp-sev-es needs it for its platform check). */
export function firmwareEventLog(path = FIRMWARE_EVENT_LOG_PATH): () => Promise<Buffer> {
  return () => readFile(path).catch(() => Buffer.alloc(0));
}

/** The variants whose issuer runs over a TPM in this build. */
function tpmIssuerVariants(): string[] {
  return variantDescriptors()
    .filter((d) => d.platform === 'tpm' && d.issuer)
    .map((d) => d.variant.name);
}

/**
 * The TPM issuer for `variant`; an Error naming the variants that have one for the others. `node`
 * says where the issuers find configfs-tsm (under the state root) and the instance metadata
 * service (THIM, the TD quote endpoint, GCE metadata).
 */
export function issuerFor(variant: Variant, openTpm: () => Promise<TpmClient>, eventLog: () => Promise<Buffer> = firmwareEventLog(), node: NodeInterfaces = { stateRoot: '/' }): Issuer {
  const d = variantDescriptor(variant);
  if (d.platform !== 'tpm' || !d.issuer) throw new Error(`attestation variant ${variant.name} has no TPM issuer in this build (${tpmIssuerVariants().join(', ')})`);
  return d.issuer({ openTpm, eventLog, ...node });
}

/** The issuer of a TDX variant whose node has no TPM (the quote comes through configfs-tsm under the state root). */
export function tdIssuerFor(variant: Variant, node: NodeInterfaces): Issuer {
  const d = variantDescriptor(variant);
  if (d.platform !== 'tdx' || !d.issuer) throw new Error(`attestation variant ${variant.name} is not a TDX variant without a TPM`);
  return d.issuer({ openTpm: () => Promise.reject(new Error(`${variant.name} has no TPM`)), eventLog: async () => Buffer.alloc(0), ...node });
}
