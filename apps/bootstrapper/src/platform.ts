/**
 * The node's attestation platform for its variant: the issuer, the node marker of the one-way
 * node lock, and the register that tells whether this boot already marked the node
 * (docs/protocol/node-lock.md; docs/protocol/tdx-dcap.md "Node marking on TDX"). A vTPM variant marks PCR 15;
 * qemu-tdx has no TPM and marks RTMR2 through the TD's sysfs files, quoting via configfs-tsm.
 */
import { join } from 'node:path';
import { variantDescriptor, type Issuer } from '@asterism/attestation';
import { CLUSTER_ID_RTMR, RtmrNodeMarker, SysfsRtmrDevice, TDX_MEASUREMENTS_DIR, TpmNodeMarker, type NodeMarker } from '@asterism/nodelock';
import { parseCloudKind } from '@asterism/metadata';
import type { BootstrapperConfig } from './flags.js';
import type { MarkReader } from './node-condition.js';
import { firmwareEventLog, issuerFor, tdIssuerFor, type NodeInterfaces } from './tpm/issuer-for.js';
import { SharedTpm } from './tpm/tpm-opener.js';

/** What the bootstrapper attests and marks with. */
export interface NodePlatform {
  readonly issuer: Issuer;
  readonly marker: NodeMarker;
  /** The cluster-ID register (PCR 15, or RTMR2 on qemu-tdx). */
  readonly mark: MarkReader;
  close(): Promise<void>;
}

/** What the platform is built from: the bootstrapper's flags, or the verification service's (verify/flags.ts). */
export type NodePlatformConfig = Pick<BootstrapperConfig, 'variant' | 'stateRoot' | 'tpm' | 'csp' | 'metadata'>;

/**
 * Where the issuers find the node's interfaces: configfs-tsm under `--state-root`, and on AWS,
 * Azure or GCP the instance metadata service `--metadata` names (default: the cloud's own).
 */
export function nodeInterfaces(config: Pick<BootstrapperConfig, 'stateRoot' | 'metadata' | 'csp'>): NodeInterfaces {
  const cloudMetadataUrl = parseCloudKind(config.csp) && /^https?:\/\//.test(config.metadata) ? config.metadata.replace(/\/$/, '') : undefined;
  return { stateRoot: config.stateRoot, ...(cloudMetadataUrl ? { metadataUrl: cloudMetadataUrl } : {}) };
}

/**
 * The platform of `config.variant`. Device paths are under `--state-root`, so a test can stand
 * in fake sysfs/configfs folders. `onLeftoversFlushed` reports transient TPM objects an earlier
 * run left behind.
 */
export function nodePlatformFor(config: NodePlatformConfig, onLeftoversFlushed: (count: number) => void): NodePlatform {
  if (variantDescriptor(config.variant).platform === 'tdx') {
    const rtmrs = new SysfsRtmrDevice(join(config.stateRoot, TDX_MEASUREMENTS_DIR));
    return {
      issuer: tdIssuerFor(config.variant, { stateRoot: config.stateRoot }),
      marker: new RtmrNodeMarker(async () => rtmrs),
      mark: { readMark: () => rtmrs.read(CLUSTER_ID_RTMR) },
      close: async () => undefined,
    };
  }
  const tpm = new SharedTpm(config.tpm, onLeftoversFlushed);
  return { issuer: issuerFor(config.variant, tpm.open, firmwareEventLog(), nodeInterfaces(config)), marker: new TpmNodeMarker(tpm.open), mark: tpm, close: () => tpm.close() };
}
