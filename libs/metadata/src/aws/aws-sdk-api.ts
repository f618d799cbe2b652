import type { EC2Client, Instance } from '@aws-sdk/client-ec2';
import type { ElasticLoadBalancingV2Client } from '@aws-sdk/client-elastic-load-balancing-v2';
import { TAG_ROLE, TAG_UID } from '../tags.js';
import { MetadataError, parseRole, type InstanceMetadata } from '../types.js';
import { awsProviderId, type AwsCloudApi } from './aws-provider.js';

/** Options of {@link AwsSdkCloudApi}; both unset on a real node (regional endpoints, instance role). */
export interface AwsSdkOptions {
  /** Endpoint override, e.g. a moto server on loopback in tests. */
  endpoint?: string;
  /** Static credentials; default = the SDK's provider chain (instance profile via IMDS on EC2). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Per-request timeout of the SDK's HTTP handler (ms). */
  requestTimeoutMs?: number;
  /** Attempts including the first (the SDK's standard retry strategy with backoff). */
  maxAttempts?: number;
}

/**
 * The SDK's two client packages, loaded on first use: together about 1 MB of a node's bundle that
 * only AWS nodes run, and a node's start is CPU-bound on a slow VM (docs/protocol/node-image.md
 * "Boot time").
 */
type Sdk = [typeof import('@aws-sdk/client-ec2'), typeof import('@aws-sdk/client-elastic-load-balancing-v2')];
let sdkModules: Promise<Sdk> | undefined;
function loadSdk(): Promise<Sdk> {
  return (sdkModules ??= Promise.all([import('@aws-sdk/client-ec2'), import('@aws-sdk/client-elastic-load-balancing-v2')]));
}

/** ELBv2 DescribeTags accepts at most 20 ARNs per call. */
const TAG_BATCH = 20;

function sdkError(what: string, err: unknown): MetadataError {
  const e = err as { name?: string; message?: string };
  return new MetadataError('METADATA_UNAVAILABLE', `AWS ${what}: ${e?.name ?? 'Error'}: ${e?.message ?? String(err)}`, { cause: err, details: { call: what } });
}

function toInstance(i: Instance): InstanceMetadata {
  const role = i.Tags?.find((t) => t.Key === TAG_ROLE)?.Value;
  return {
    Name: i.PrivateDnsName ?? '',
    ProviderID: awsProviderId(i.Placement?.AvailabilityZone ?? '', i.InstanceId ?? ''),
    Role: parseRole(role),
    VPCIP: i.PrivateIpAddress ?? '',
    SecondaryIPRange: '',
    AliasIPRanges: null,
  };
}

/** {@link AwsCloudApi} on the official AWS SDK v3 clients (SigV4 signing, retries, pagination). */
export class AwsSdkCloudApi implements AwsCloudApi {
  private readonly ec2 = new Map<string, EC2Client>();
  private readonly elb = new Map<string, ElasticLoadBalancingV2Client>();

  constructor(private readonly o: AwsSdkOptions = {}) {}

  private config(region: string) {
    return {
      region,
      maxAttempts: this.o.maxAttempts ?? 3,
      requestHandler: { requestTimeout: this.o.requestTimeoutMs ?? 10_000, connectionTimeout: 3_000 },
      ...(this.o.endpoint ? { endpoint: this.o.endpoint } : {}),
      ...(this.o.credentials ? { credentials: this.o.credentials } : {}),
    };
  }

  private async ec2For(region: string): Promise<{ client: EC2Client; sdk: Sdk[0] }> {
    const [sdk] = await loadSdk();
    let client = this.ec2.get(region);
    if (!client) this.ec2.set(region, (client = new sdk.EC2Client(this.config(region))));
    return { client, sdk };
  }

  private async elbFor(region: string): Promise<{ client: ElasticLoadBalancingV2Client; sdk: Sdk[1] }> {
    const [, sdk] = await loadSdk();
    let client = this.elb.get(region);
    if (!client) this.elb.set(region, (client = new sdk.ElasticLoadBalancingV2Client(this.config(region))));
    return { client, sdk };
  }

  async instancesByUid(region: string, uid: string, signal?: AbortSignal): Promise<InstanceMetadata[]> {
    const out: InstanceMetadata[] = [];
    const ec2 = await this.ec2For(region);
    let NextToken: string | undefined;
    do {
      const cmd = new ec2.sdk.DescribeInstancesCommand({
        Filters: [
          { Name: `tag:${TAG_UID}`, Values: [uid] },
          { Name: 'instance-state-name', Values: ['running'] },
        ],
        ...(NextToken ? { NextToken } : {}),
      });
      const res = await ec2.client.send(cmd, signal ? { abortSignal: signal } : {}).catch((err: unknown) => {
        throw sdkError('DescribeInstances', err);
      });
      for (const r of res.Reservations ?? []) for (const i of r.Instances ?? []) out.push(toInstance(i));
      NextToken = res.NextToken;
    } while (NextToken);
    return out;
  }

  async loadBalancerDnsName(region: string, uid: string, signal?: AbortSignal): Promise<string> {
    const opts = signal ? { abortSignal: signal } : {};
    const elb = await this.elbFor(region);
    const lbs: { arn: string; dns: string }[] = [];
    let Marker: string | undefined;
    do {
      const res = await elb.client.send(new elb.sdk.DescribeLoadBalancersCommand(Marker ? { Marker } : {}), opts).catch((err: unknown) => {
        throw sdkError('DescribeLoadBalancers', err);
      });
      for (const lb of res.LoadBalancers ?? []) if (lb.LoadBalancerArn && lb.DNSName) lbs.push({ arn: lb.LoadBalancerArn, dns: lb.DNSName });
      Marker = res.NextMarker;
    } while (Marker);
    for (let i = 0; i < lbs.length; i += TAG_BATCH) {
      const batch = lbs.slice(i, i + TAG_BATCH);
      const res = await elb.client.send(new elb.sdk.DescribeTagsCommand({ ResourceArns: batch.map((b) => b.arn) }), opts).catch((err: unknown) => {
        throw sdkError('DescribeTags', err);
      });
      const hit = res.TagDescriptions?.find((d) => d.Tags?.some((t) => t.Key === TAG_UID && t.Value === uid));
      if (hit) return batch.find((b) => b.arn === hit.ResourceArn)!.dns;
    }
    throw new MetadataError('METADATA_NOT_FOUND', `AWS: no load balancer tagged ${TAG_UID}=${uid} in ${region}`, { details: { region, uid } });
  }

  /**
   * The `TpmSupport` of AMI `imageId` in `region` (undefined when the image has none), for the
   * aws-nitro-tpm validator's image check (docs/protocol/cloud-vtpm-variants.md). An image that
   * does not exist is an error, not "no TPM support".
   */
  async tpmSupport(region: string, imageId: string, signal?: AbortSignal): Promise<string | undefined> {
    const ec2 = await this.ec2For(region);
    const res = await ec2.client.send(new ec2.sdk.DescribeImagesCommand({ ImageIds: [imageId] }), signal ? { abortSignal: signal } : {}).catch((err: unknown) => {
      throw sdkError('DescribeImages', err);
    });
    const image = res.Images?.[0];
    if (!image) throw new MetadataError('METADATA_NOT_FOUND', `AWS DescribeImages: no image ${imageId} in ${region}`, { details: { region, imageId } });
    return image.TpmSupport;
  }

  /** Closes the SDK clients' sockets. */
  destroy(): void {
    for (const c of [...this.ec2.values(), ...this.elb.values()]) c.destroy();
  }
}
