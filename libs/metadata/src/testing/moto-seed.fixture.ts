import { DescribeImagesCommand, DescribeSubnetsCommand, EC2Client, RunInstancesCommand } from '@aws-sdk/client-ec2';
import { CreateLoadBalancerCommand, ElasticLoadBalancingV2Client } from '@aws-sdk/client-elastic-load-balancing-v2';

/** What {@link seedMotoCluster} created. */
export interface SeededAwsCluster {
  region: string;
  imageId: string;
  /** Instance id, private DNS name, private IP and role tag of each cluster instance. */
  instances: { id: string; name: string; ip: string; az: string; role: string }[];
  loadBalancerDns: string;
}

const CREDENTIALS = { accessKeyId: 'testing', secretAccessKey: 'testing' };

/**
 * Creates, through the real EC2/ELBv2 APIs of a moto server: two instances of cluster `uid`
 * (control plane + worker), one instance of another cluster, a stopped-cluster decoy load balancer
 * and the cluster's load balancer, each tagged like a real cluster (docs/protocol/cloud-metadata.md).
 */
export async function seedMotoCluster(endpoint: string, uid: string, region = 'eu-central-1'): Promise<SeededAwsCluster> {
  const cfg = { region, endpoint, credentials: CREDENTIALS };
  const ec2 = new EC2Client(cfg);
  const elb = new ElasticLoadBalancingV2Client(cfg);
  try {
    const imageId = (await ec2.send(new DescribeImagesCommand({}))).Images![0]!.ImageId!;
    const run = async (tags: Record<string, string>) => {
      const res = await ec2.send(
        new RunInstancesCommand({
          ImageId: imageId,
          MinCount: 1,
          MaxCount: 1,
          InstanceType: 'm6a.xlarge',
          TagSpecifications: [{ ResourceType: 'instance', Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) }],
        }),
      );
      const i = res.Instances![0]!;
      return { id: i.InstanceId!, name: i.PrivateDnsName!, ip: i.PrivateIpAddress!, az: i.Placement!.AvailabilityZone!, role: tags['constellation-role'] ?? '' };
    };
    const instances = [await run({ 'constellation-uid': uid, 'constellation-role': 'control-plane' }), await run({ 'constellation-uid': uid, 'constellation-role': 'worker' })];
    await run({ 'constellation-uid': `${uid}-other`, 'constellation-role': 'worker' });
    const subnets = (await ec2.send(new DescribeSubnetsCommand({}))).Subnets!.slice(0, 2).map((s) => s.SubnetId!);
    const lb = async (name: string, clusterUid: string) =>
      (await elb.send(new CreateLoadBalancerCommand({ Name: name, Subnets: subnets, Type: 'network', Tags: [{ Key: 'constellation-uid', Value: clusterUid }] }))).LoadBalancers![0]!.DNSName!;
    await lb(`other-${uid}`.slice(0, 32), `${uid}-other`);
    const loadBalancerDns = await lb(`lb-${uid}`.slice(0, 32), uid);
    return { region, imageId, instances, loadBalancerDns };
  } finally {
    ec2.destroy();
    elb.destroy();
  }
}
