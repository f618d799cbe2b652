import { KUBERNETES_PORT, requireTag, TAG_INIT_SECRET_HASH, TAG_ROLE, TAG_UID } from '../tags.js';
import { parseRole, type InstanceMetadata, type MetadataProvider } from '../types.js';
import type { AwsImds } from './aws-imds.js';

/** EC2/ELB calls the AWS provider needs (signed by the AWS SDK in {@link AwsSdkCloudApi}). */
export interface AwsCloudApi {
  /** Running instances tagged `constellation-uid=<uid>` in `region`. */
  instancesByUid(region: string, uid: string, signal?: AbortSignal): Promise<InstanceMetadata[]>;
  /** DNS name of the load balancer tagged `constellation-uid=<uid>` in `region`. */
  loadBalancerDnsName(region: string, uid: string, signal?: AbortSignal): Promise<string>;
}

/** `aws:///<availability zone>/<instance id>`, the provider ID Kubernetes' AWS cloud provider uses. */
export function awsProviderId(availabilityZone: string, instanceId: string): string {
  return `aws:///${availabilityZone}/${instanceId}`;
}

/**
 * Metadata on AWS (docs/protocol/cloud-metadata.md, "AWS"): self and tags from IMDSv2, peers
 * and the load balancer from EC2/ELBv2 in the instance's region, filtered by the cluster UID tag.
 */
export class AwsMetadata implements MetadataProvider {
  constructor(
    private readonly imds: AwsImds,
    private readonly api: AwsCloudApi,
  ) {}

  async self(signal?: AbortSignal): Promise<InstanceMetadata> {
    const doc = await this.imds.identity(signal);
    const hostname = (await this.imds.get('/latest/meta-data/local-hostname', signal)).trim();
    return {
      Name: hostname,
      ProviderID: awsProviderId(doc.availabilityZone, doc.instanceId),
      Role: parseRole(await this.imds.tag(TAG_ROLE, signal)),
      VPCIP: doc.privateIp,
      SecondaryIPRange: '',
      AliasIPRanges: null,
    };
  }

  async list(signal?: AbortSignal): Promise<InstanceMetadata[]> {
    const doc = await this.imds.identity(signal);
    return this.api.instancesByUid(doc.region, await this.uid(signal), signal);
  }

  async getLoadBalancerEndpoint(signal?: AbortSignal): Promise<{ host: string; port: string }> {
    const doc = await this.imds.identity(signal);
    return { host: await this.api.loadBalancerDnsName(doc.region, await this.uid(signal), signal), port: KUBERNETES_PORT };
  }

  async initSecretHash(signal?: AbortSignal): Promise<string> {
    return requireTag(await this.imds.tag(TAG_INIT_SECRET_HASH, signal), 'AWS', TAG_INIT_SECRET_HASH);
  }

  async uid(signal?: AbortSignal): Promise<string> {
    return requireTag(await this.imds.tag(TAG_UID, signal), 'AWS', TAG_UID);
  }
}
