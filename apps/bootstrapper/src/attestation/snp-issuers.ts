import { join } from 'node:path';
import {
  AwsSevSnpIssuer,
  AzureSevSnpIssuer,
  CONFIGFS_TSM_REPORT_DIR,
  ConfigfsTsmReportSource,
  GCE_METADATA_BASE_URL,
  GceMetadataClient,
  GcpSevSnpIssuer,
  NODE_TSM_FS,
  type Issuer,
  type TpmOpener,
  type TsmFileSystem,
} from '@asterism/attestation';

/** Where a node's attestation interfaces are: its paths (under `--state-root`) and its metadata service. */
export interface NodeInterfaces {
  /** Prefix of every node path (`/` on a real node). */
  readonly stateRoot: string;
  /** The cloud's instance metadata service (`--metadata` as an http(s) URL); undefined = its link-local default. */
  readonly metadataUrl?: string;
  /** configfs-tsm file operations (tests replay recorded bytes through a fake). */
  readonly tsmFs?: TsmFileSystem;
}

/**
 * The issuer of an AMD SEV-SNP variant on this node, or undefined for other variants:
 * azure-sev-snp (HCL report in TPM NV, AK persisted by the HCL, VCEK from THIM on the instance
 * metadata service at `metadataUrl`), aws-sev-snp and gcp-sev-snp (extended SNP report through
 * configfs-tsm under `stateRoot`; GCE instance identity from the metadata server at `metadataUrl`).
 * Each reports a clear ISSUER_FAILED on a node without the interface it needs (no configfs-tsm,
 * naming the path under the state root; no HCL report) when it first attests.
 */
export function snpIssuerFor(variant: string, openTpm: TpmOpener, node: NodeInterfaces = { stateRoot: '/' }): Issuer | undefined {
  const reports = () => new ConfigfsTsmReportSource(join(node.stateRoot, CONFIGFS_TSM_REPORT_DIR), node.tsmFs ?? NODE_TSM_FS, { devicePath: join(node.stateRoot, 'dev/sev-guest') });
  switch (variant) {
    case 'azure-sev-snp':
      return new AzureSevSnpIssuer(openTpm, node.metadataUrl ? { imdsBaseUrl: node.metadataUrl } : {});
    case 'aws-sev-snp':
      return new AwsSevSnpIssuer(openTpm, reports());
    case 'gcp-sev-snp':
      return new GcpSevSnpIssuer(openTpm, reports(), new GceMetadataClient(node.metadataUrl ?? GCE_METADATA_BASE_URL));
    default:
      return undefined;
  }
}
