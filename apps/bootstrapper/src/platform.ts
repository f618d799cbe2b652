/**
 * The node's attestation platform for its variant: the issuer, the node marker of the one-way
 * node lock, and the register that tells whether this boot already marked the node
 * (SPEC.md §5.8; docs/protocol/tdx-dcap.md "Node marking on TDX"). A vTPM variant marks PCR 15;
 * qemu-tdx has no TPM and marks RTMR2 through the TD's sysfs files, quoting via configfs-tsm.
 */
import { join } from 'node:path';
import { AzureTdxIssuer, CONFIGFS_TSM_REPORT_DIR, ConfigfsTsmQuoteProvider, DummyIssuer, QemuTdxIssuer, QemuVtpmIssuer, type Issuer } from '@asterism/attestation';
import { CLUSTER_ID_RTMR, RtmrNodeMarker, SysfsRtmrDevice, TDX_MEASUREMENTS_DIR, TpmNodeMarker, type NodeMarker } from '@asterism/nodelock';
import type { BootstrapperConfig } from './flags.js';
import type { MarkReader } from './node-condition.js';
import { SharedTpm } from './tpm/tpm-opener.js';

/** What the bootstrapper attests and marks with. */
export interface NodePlatform {
  readonly issuer: Issuer;
  readonly marker: NodeMarker;
  /** The cluster-ID register (PCR 15, or RTMR2 on qemu-tdx). */
  readonly mark: MarkReader;
  close(): Promise<void>;
}

/** Variants this build can bootstrap a node with. */
export const BOOTSTRAP_VARIANTS = ['qemu-vtpm', 'qemu-tdx', 'azure-tdx', 'dummy'] as const;

/**
 * The platform of `config.variant`. Device paths are under `--state-root`, so a test can stand
 * in fake sysfs/configfs folders. `onLeftoversFlushed` reports transient TPM objects an earlier
 * run left behind.
 */
export function nodePlatformFor(config: BootstrapperConfig, onLeftoversFlushed: (count: number) => void): NodePlatform {
  const variant = config.variant.name;
  if (variant === 'qemu-tdx') {
    const rtmrs = new SysfsRtmrDevice(join(config.stateRoot, TDX_MEASUREMENTS_DIR));
    return {
      issuer: new QemuTdxIssuer(new ConfigfsTsmQuoteProvider(join(config.stateRoot, CONFIGFS_TSM_REPORT_DIR))),
      marker: new RtmrNodeMarker(async () => rtmrs),
      mark: { readMark: () => rtmrs.read(CLUSTER_ID_RTMR) },
      close: async () => undefined,
    };
  }
  const tpm = new SharedTpm(config.tpm, onLeftoversFlushed);
  return { issuer: tpmIssuer(variant, tpm), marker: new TpmNodeMarker(tpm.open), mark: tpm, close: () => tpm.close() };
}

function tpmIssuer(variant: string, tpm: SharedTpm): Issuer {
  switch (variant) {
    case 'qemu-vtpm':
      return new QemuVtpmIssuer(tpm.open);
    case 'azure-tdx':
      return new AzureTdxIssuer(tpm.open);
    case 'dummy':
      return new DummyIssuer();
    default:
      throw new Error(`attestation variant ${variant} has no issuer in this build (${BOOTSTRAP_VARIANTS.join(', ')})`);
  }
}
