/**
 * AwsMetadata against real protocol servers: a moto server (EC2 + ELBv2 emulation, driven through
 * the official AWS SDK with SigV4) and a loopback IMDSv2 replaying the documented responses.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { awsImdsFake, closedLoopbackPort, MotoServer, motoUnavailable, seedMotoCluster, type LoopbackServer, type SeededAwsCluster } from '../testing.js';
import { MetadataError } from '../types.js';
import { AwsImds } from './aws-imds.js';
import { AwsMetadata } from './aws-provider.js';
import { AwsSdkCloudApi } from './aws-sdk-api.js';

const skip = motoUnavailable();
const UID = 'c0ffee12';
const HASH = '$2a$10$abcdefghijklmnopqrstuuVWXYZ0123456789abcdefghijklmnopq';

describe('AwsMetadata against moto and an IMDSv2 fake', { skip }, () => {
  const moto = new MotoServer();
  let imds: LoopbackServer;
  let cluster: SeededAwsCluster;
  let api: AwsSdkCloudApi;
  let provider: AwsMetadata;

  before(async () => {
    await moto.start();
    cluster = await seedMotoCluster(moto.url, UID);
    const me = cluster.instances[0]!;
    imds = awsImdsFake({
      instanceId: me.id,
      region: cluster.region,
      availabilityZone: me.az,
      privateIp: me.ip,
      imageId: cluster.imageId,
      hostname: me.name,
      tags: { 'constellation-uid': UID, 'constellation-role': 'control-plane', 'constellation-init-secret-hash': HASH },
    });
    api = new AwsSdkCloudApi({ endpoint: moto.url, credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' }, maxAttempts: 1 });
    provider = new AwsMetadata(new AwsImds(await imds.start(), { backoffMs: 10 }), api);
  });
  after(async () => {
    api?.destroy();
    await imds?.stop();
    await moto.stop();
  });

  it('self comes from IMDSv2 (session token first, then GETs carrying it)', async () => {
    const me = cluster.instances[0]!;
    assert.deepEqual(await provider.self(), { Name: me.name, ProviderID: `aws:///${me.az}/${me.id}`, Role: 'ControlPlane', VPCIP: me.ip, SecondaryIPRange: '', AliasIPRanges: null });
    assert.equal(imds.seen[0]!.method, 'PUT');
    assert.ok(imds.seen.slice(1).every((r) => r.method === 'GET' && r.headers['x-aws-ec2-metadata-token']));
    assert.equal(imds.seen.filter((r) => r.method === 'PUT').length, 1, 'the session token is reused');
  });

  it('tags give uid and init secret hash', async () => {
    assert.equal(await provider.uid(), UID);
    assert.equal(await provider.initSecretHash(), HASH);
  });

  it('list is DescribeInstances filtered by the uid tag (other clusters excluded)', async () => {
    const peers = await provider.list();
    assert.deepEqual(
      peers.map((p) => [p.Name, p.ProviderID, p.Role, p.VPCIP]).sort(),
      cluster.instances.map((i) => [i.name, `aws:///${i.az}/${i.id}`, i.role === 'worker' ? 'Worker' : 'ControlPlane', i.ip]).sort(),
    );
  });

  it('the load balancer endpoint is the DNS name of the ELB tagged with the uid, port 6443', async () => {
    assert.deepEqual(await provider.getLoadBalancerEndpoint(), { host: cluster.loadBalancerDns, port: '6443' });
  });

  it('DescribeImages through the SDK: an AMI without TpmSupport answers undefined, an unknown AMI is an error', async () => {
    // moto does not model TpmSupport, so only the "unset" answer can be seen here.
    assert.equal(await api.tpmSupport(cluster.region, cluster.imageId), undefined);
    await assert.rejects(api.tpmSupport(cluster.region, 'ami-0000000000000dead'), (err: unknown) => err instanceof MetadataError && /DescribeImages/.test(err.message));
  });

  it('IMDS answering 503 twice is retried; an expired token (401) is fetched again', async () => {
    imds.failNext = 2;
    assert.equal(await provider.uid(), UID);
    const before = imds.seen.filter((r) => r.method === 'PUT').length;
    const fresh = new AwsImds(imds.url, { backoffMs: 1 });
    await fresh.tag('constellation-uid');
    (fresh as unknown as { token: { value: string } }).token.value = 'revoked';
    assert.equal(await fresh.tag('constellation-uid'), UID);
    assert.equal(imds.seen.filter((r) => r.method === 'PUT').length, before + 2);
  });

  it('a missing tag is METADATA_NOT_FOUND naming the tag', async () => {
    const bare = awsImdsFake({ instanceId: 'i-1', region: 'eu-central-1', availabilityZone: 'eu-central-1a', privateIp: '10.0.0.1', imageId: 'ami-1', hostname: 'h', tags: {} });
    try {
      const p = new AwsMetadata(new AwsImds(await bare.start()), api);
      await assert.rejects(p.initSecretHash(), (e: unknown) => e instanceof MetadataError && e.code === 'METADATA_NOT_FOUND' && /constellation-init-secret-hash/.test(e.message));
    } finally {
      await bare.stop();
    }
  });

  it('EC2 unreachable is METADATA_UNAVAILABLE from the SDK call', async () => {
    const dead = new AwsSdkCloudApi({ endpoint: await closedLoopbackPort(), credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' }, maxAttempts: 2 });
    try {
      await assert.rejects(dead.instancesByUid('eu-central-1', UID), (e: unknown) => e instanceof MetadataError && e.code === 'METADATA_UNAVAILABLE' && /DescribeInstances/.test(e.message));
    } finally {
      dead.destroy();
    }
  });
});

describe('AwsMetadata off AWS', () => {
  it('IMDS absent: "not on AWS: IMDS not reachable at <url> (connect ECONNREFUSED ...)" after bounded retries', async () => {
    const url = await closedLoopbackPort();
    const started = Date.now();
    const p = new AwsMetadata(new AwsImds(url, { attempts: 3, backoffMs: 20, timeoutMs: 500 }), new AwsSdkCloudApi());
    await assert.rejects(p.self(), (e: unknown) => {
      assert.ok(e instanceof MetadataError);
      assert.equal(e.code, 'METADATA_ENDPOINT_ABSENT');
      assert.match(e.message, new RegExp(`^not on AWS: IMDS not reachable at ${url} \\(connect ECONNREFUSED`));
      return true;
    });
    assert.ok(Date.now() - started < 5_000);
  });
});
