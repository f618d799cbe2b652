/** GcpMetadata against loopback servers replaying the GCE metadata server and Compute Engine v1. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closedLoopbackPort, gcpComputeFake, gcpMetadataFake, LoopbackServer, type FakeGcpCloud } from '../testing.js';
import { MetadataError } from '../types.js';
import { gcpMetadata } from './gcp-factory.js';
import { GcpMetadataServer } from './gcp-metadata-server.js';
import { regionOfZone } from './gcp-provider.js';

const UID = '5eed5eed';
const HASH = '$2a$10$GCPgcpGCPgcpGCPgcpGCPg0123456789abcdefghijklmnopqrstu';
const labels = (role: string, uid = UID) => ({ 'constellation-uid': uid, 'constellation-role': role });
const cloud: FakeGcpCloud = {
  project: 'constellation-331613',
  projectNumber: '123456789',
  instances: [
    { name: `constell-${UID}-control-plane-abcd`, zone: 'europe-west3-b', ip: '192.168.178.2', aliasIpRanges: ['10.10.0.0/24'], labels: labels('control-plane'), attributes: { 'constellation-init-secret-hash': HASH } },
    { name: `constell-${UID}-worker-efgh`, zone: 'europe-west3-c', ip: '192.168.178.3', aliasIpRanges: ['10.10.1.0/24'], labels: labels('worker'), attributes: {} },
    { name: 'someone-else', zone: 'europe-west3-b', ip: '192.168.178.9', aliasIpRanges: [], labels: labels('worker', 'ffff'), attributes: {} },
  ],
  self: `constell-${UID}-control-plane-abcd`,
  forwardingRules: [
    { region: 'europe-west3', address: '34.89.1.1', labels: { 'constellation-uid': 'ffff' } },
    { region: 'europe-west3', address: '34.89.2.2', labels: { 'constellation-uid': UID } },
  ],
  token: 'ya29.fake-service-account-token',
};

describe('GcpMetadata against metadata server and Compute Engine fakes', () => {
  let md: LoopbackServer;
  let compute: LoopbackServer;
  let provider: ReturnType<typeof gcpMetadata>;
  before(async () => {
    md = gcpMetadataFake(cloud);
    compute = gcpComputeFake(cloud);
    provider = gcpMetadata({ metadataBaseUrl: await md.start(), computeBaseUrl: await compute.start(), policy: { backoffMs: 5 } });
  });
  after(async () => {
    await md.stop();
    await compute.stop();
  });

  it('self: metadata server (Metadata-Flavor: Google) plus the instance labels', async () => {
    assert.deepEqual(await provider.self(), {
      Name: cloud.self,
      ProviderID: `gce://${cloud.project}/europe-west3-b/${cloud.self}`,
      Role: 'ControlPlane',
      VPCIP: '192.168.178.2',
      SecondaryIPRange: '',
      AliasIPRanges: ['10.10.0.0/24'],
    });
    assert.ok(md.seen.every((r) => r.headers['metadata-flavor'] === 'Google'));
    assert.ok(compute.seen.every((r) => r.headers.authorization === `Bearer ${cloud.token}`));
  });

  it('init secret hash from the instance attribute, uid from the label', async () => {
    assert.equal(await provider.initSecretHash(), HASH);
    assert.equal(await provider.uid(), UID);
  });

  it('list: aggregated instances of every zone (all pages) labelled with the uid', async () => {
    const peers = await provider.list();
    assert.deepEqual(
      peers.map((p) => [p.Name, p.ProviderID, p.Role, p.VPCIP, p.AliasIPRanges]),
      [
        [cloud.instances[0]!.name, `gce://${cloud.project}/europe-west3-b/${cloud.instances[0]!.name}`, 'ControlPlane', '192.168.178.2', ['10.10.0.0/24']],
        [cloud.instances[1]!.name, `gce://${cloud.project}/europe-west3-c/${cloud.instances[1]!.name}`, 'Worker', '192.168.178.3', ['10.10.1.0/24']],
      ],
    );
    assert.ok(compute.seen.some((r) => r.url.includes('pageToken=1')));
  });

  it("load balancer: the region's forwarding rule labelled with the uid", async () => {
    assert.deepEqual(await provider.getLoadBalancerEndpoint(), { host: '34.89.2.2', port: '6443' });
  });

  it('transient metadata-server failures (503) are retried', async () => {
    md.failNext = 2;
    assert.equal(await provider.initSecretHash(), HASH);
  });
});

describe('GcpMetadata off GCP and on bad answers', () => {
  it('metadata server absent: "not on GCP: metadata server not reachable at ..."', async () => {
    const url = await closedLoopbackPort();
    await assert.rejects(gcpMetadata({ metadataBaseUrl: url, policy: { attempts: 2, backoffMs: 5 } }).self(), (e: unknown) => {
      assert.ok(e instanceof MetadataError);
      assert.equal(e.code, 'METADATA_ENDPOINT_ABSENT');
      assert.match(e.message, new RegExp(`^not on GCP: metadata server not reachable at ${url} \\(connect ECONNREFUSED`));
      return true;
    });
  });

  it('an HTTP server that does not echo Metadata-Flavor is not the metadata server', async () => {
    const impostor = new LoopbackServer(() => ({ status: 200, body: 'hello' }));
    try {
      await assert.rejects(new GcpMetadataServer(await impostor.start()).get('instance/name'), (e: unknown) => e instanceof MetadataError && e.code === 'METADATA_MALFORMED' && /Metadata-Flavor/.test(e.message));
    } finally {
      await impostor.stop();
    }
  });

  const zones = [
    ['europe-west3-b', 'europe-west3'],
    ['us-central1-a', 'us-central1'],
  ] as const;
  for (const [zone, region] of zones) it(`region of ${zone} is ${region}`, () => assert.equal(regionOfZone(zone), region));
});
