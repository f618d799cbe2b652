import { KUBERNETES_PORT, requireTag, TAG_INIT_SECRET_HASH, TAG_ROLE, TAG_UID } from '../tags.js';
import { MetadataError, parseRole, type InstanceMetadata, type MetadataProvider } from '../types.js';
import { azureProviderId, type AzurePeerSource } from './azure-arm-peers.js';
import type { AzureImds } from './azure-imds.js';

/**
 * Metadata on Azure (docs/protocol/cloud-metadata.md, "Azure"): self, tags and the load
 * balancer's frontend from IMDS; peers from the scale sets of the VM's resource group.
 */
export class AzureMetadata implements MetadataProvider {
  constructor(
    private readonly imds: AzureImds,
    private readonly peers: AzurePeerSource,
  ) {}

  async self(signal?: AbortSignal): Promise<InstanceMetadata> {
    const i = await this.imds.instance(signal);
    return { Name: i.computerName, ProviderID: azureProviderId(i.resourceId), Role: parseRole(i.tags[TAG_ROLE]), VPCIP: i.privateIp, SecondaryIPRange: '', AliasIPRanges: null };
  }

  async list(signal?: AbortSignal): Promise<InstanceMetadata[]> {
    const i = await this.imds.instance(signal);
    return this.peers.scaleSetPeers(i.subscriptionId, i.resourceGroupName, requireTag(i.tags[TAG_UID], 'Azure', TAG_UID), signal);
  }

  async getLoadBalancerEndpoint(signal?: AbortSignal): Promise<{ host: string; port: string }> {
    const [host] = await this.imds.loadBalancerFrontends(signal);
    if (!host) throw new MetadataError('METADATA_NOT_FOUND', `Azure: IMDS at ${this.imds.baseUrl} reports no public load balancer frontend for this VM`);
    return { host, port: KUBERNETES_PORT };
  }

  async initSecretHash(signal?: AbortSignal): Promise<string> {
    return requireTag((await this.imds.instance(signal)).tags[TAG_INIT_SECRET_HASH], 'Azure', TAG_INIT_SECRET_HASH);
  }

  async uid(signal?: AbortSignal): Promise<string> {
    return requireTag((await this.imds.instance(signal)).tags[TAG_UID], 'Azure', TAG_UID);
  }
}
