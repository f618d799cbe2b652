/**
 * The node's attestation platform for its variant: the issuer, the node marker of the one-way
 * node lock, and the register that tells whether this boot already marked the node
 * (docs/protocol/node-lock.md; docs/protocol/tdx-dcap.md "Node marking on TDX"). A vTPM variant marks PCR 15;
 * qemu-tdx has no TPM and marks RTMR2 through the TD's sysfs files, quoting via configfs-tsm.
 */
import { join } from 'node:path';
import { variantDescriptor, VtpmIssuer, type Issuer, type Variant } from '@asterism/attestation';
import { CLUSTER_ID_RTMR, RtmrNodeMarker, SysfsRtmrDevice, TDX_MEASUREMENTS_DIR, TpmNodeMarker, type NodeMarker } from '@asterism/nodelock';
import { parseCloudKind } from '@asterism/metadata';
import { firmwareEventLog, issuerFor, tdIssuerFor, type NodeInterfaces } from './issuer-for.js';
import { SharedTpm, type MarkReader } from './shared-tpm.js';

/** What a node process (the bootstrapper, the verification service) attests and marks with. */
export interface NodePlatform {
  readonly issuer: Issuer;
  readonly marker: NodeMarker;
  /** The cluster-ID register (PCR 15, or RTMR2 on qemu-tdx). */
  readonly mark: MarkReader;
  close(): Promise<void>;
}

/** What the platform is built from: the bootstrapper's flags, or the verification service's (apps/verification-service). */
export interface NodePlatformConfig {
  variant: Variant;
  /** Prefix of the configfs-tsm / TDX sysfs paths (`/` on a node; a folder in tests). */
  stateRoot: string;
  /** `--tpm`: a device path, `unix:<path>` or `tcp:<host>:<port>` (platform-flags.ts). */
  tpm: string;
  /** `--csp`: QEMU, AWS, Azure or GCP. */
  csp: string;
  /** `--metadata`: the metadata source; an http(s) URL on a cloud names its instance metadata service. */
  metadata: string;
}

/**
 * Where the issuers find the node's interfaces: configfs-tsm under `--state-root`, and on AWS,
 * Azure or GCP the instance metadata service `--metadata` names (default: the cloud's own).
 */
export function nodeInterfaces(config: Pick<NodePlatformConfig, 'stateRoot' | 'metadata' | 'csp'>): NodeInterfaces {
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

/** Flushes the attestation keys a vTPM issuer keeps loaded (the TPM outlives the connection). */
export async function releaseAttestationKeys(issuer: Issuer): Promise<void> {
  if (issuer instanceof VtpmIssuer) await issuer.releaseAttestationKeys().catch(() => 0);
}
