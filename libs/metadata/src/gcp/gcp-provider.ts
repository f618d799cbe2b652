import { KUBERNETES_PORT, requireTag, TAG_INIT_SECRET_HASH, TAG_ROLE, TAG_UID } from '../tags.js';
import { parseRole, type InstanceMetadata, type MetadataProvider } from '../types.js';
import { gcpProviderId, type GcpComputeApi } from './gcp-compute-api.js';
import type { GcpMetadataServer } from './gcp-metadata-server.js';

/** `europe-west3-b` → `europe-west3`. */
export function regionOfZone(zone: string): string {
  return zone.replace(/-[a-z]$/, '');
}

/**
 * Metadata on GCP (docs/protocol/cloud-metadata.md, "GCP"): name, zone, project and addresses from
 * the metadata server, the init-secret hash from an instance attribute, role and uid from the
 * instance's labels, peers and the load balancer from the Compute Engine API.
 */
export class GcpMetadata implements MetadataProvider {
  constructor(
    private readonly server: GcpMetadataServer,
    private readonly compute: GcpComputeApi,
  ) {}

  async self(signal?: AbortSignal): Promise<InstanceMetadata> {
    const i = await this.server.instance(signal);
    const labels = await this.compute.labels(i.project, i.zone, i.name, signal);
    return { Name: i.name, ProviderID: gcpProviderId(i.project, i.zone, i.name), Role: parseRole(labels[TAG_ROLE]), VPCIP: i.networkIp, SecondaryIPRange: '', AliasIPRanges: i.aliasIpRanges };
  }

  async list(signal?: AbortSignal): Promise<InstanceMetadata[]> {
    const i = await this.server.instance(signal);
    return this.compute.instancesByUid(i.project, await this.uid(signal), signal);
  }

  async getLoadBalancerEndpoint(signal?: AbortSignal): Promise<{ host: string; port: string }> {
    const i = await this.server.instance(signal);
    return { host: await this.compute.forwardingRuleAddress(i.project, regionOfZone(i.zone), await this.uid(signal), signal), port: KUBERNETES_PORT };
  }

  async initSecretHash(signal?: AbortSignal): Promise<string> {
    return requireTag(await this.server.attribute(TAG_INIT_SECRET_HASH, signal), 'GCP', TAG_INIT_SECRET_HASH);
  }

  async uid(signal?: AbortSignal): Promise<string> {
    const i = await this.server.instance(signal);
    return requireTag((await this.compute.labels(i.project, i.zone, i.name, signal))[TAG_UID], 'GCP', TAG_UID);
  }
}
