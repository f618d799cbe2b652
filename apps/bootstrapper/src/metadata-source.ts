import { cloudMetadata, parseCloudKind, QemuMetadataClient, StaticFileMetadata, type MetadataProvider } from '@asterism/metadata';
import type { BootstrapperConfig } from './flags.js';

/**
 * The node's metadata provider: a `file:` source (local cluster) first, then by `--csp`: the
 * AWS / Azure / GCP provider (docs/protocol/cloud-metadata.md), else the qemu metadata API.
 */
export function metadataFor(config: Pick<BootstrapperConfig, 'metadata' | 'nodeName' | 'csp' | 'cloudApiUrl'>): MetadataProvider {
  if (config.metadata.startsWith('file:')) return new StaticFileMetadata(config.metadata.slice(5), config.nodeName!);
  const cloud = parseCloudKind(config.csp);
  if (cloud) return cloudMetadata(cloud, { metadataUrl: config.metadata || undefined, apiUrl: config.cloudApiUrl });
  return new QemuMetadataClient(config.metadata.replace(/\/$/, ''));
}
