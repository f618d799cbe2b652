/** AzureMetadata against loopback servers replaying Azure IMDS and the ARM list calls. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { azureArmFake, azureImdsFake, azureVmId, closedLoopbackPort, LoopbackServer, type FakeAzureCloud } from '../testing.js';
import { findSecretLeaks } from '@asterism/testing';
import { MetadataError } from '../types.js';
import { azureMetadata } from './azure-factory.js';
import { parseAzureInstance } from './azure-imds.js';

const UID = 'a1b2c3d4';
const HASH = '$2a$10$Azureazureazureazureazu0123456789abcdefghijklmnopqrstu';
const cloud: FakeAzureCloud = {
  subscriptionId: '0d202bbb-4fa7-4af8-8125-58c269a05435',
  resourceGroup: 'constell-rg',
  scaleSets: [
    { name: `constellation-scale-set-controlplanes-${UID}`, tags: { 'constellation-uid': UID, 'constellation-role': 'control-plane', 'constellation-init-secret-hash': HASH }, vms: [{ computerName: 'cp000000', ip: '10.9.0.5' }, { computerName: 'cp000001', ip: '10.9.0.6' }] },
    { name: `constellation-scale-set-workers-${UID}`, tags: { 'constellation-uid': UID, 'constellation-role': 'worker' }, vms: [{ computerName: 'wk000000', ip: '10.9.0.7' }] },
    { name: 'other-cluster-workers', tags: { 'constellation-uid': 'ffff', 'constellation-role': 'worker' }, vms: [{ computerName: 'other0', ip: '10.9.9.9' }] },
  ],
  self: { scaleSet: `constellation-scale-set-controlplanes-${UID}`, index: 1 },
  loadBalancerIp: '20.61.1.2',
  token: 'eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.fake-managed-identity-token',
};

describe('AzureMetadata against IMDS and ARM fakes', () => {
  let imds: LoopbackServer;
  let arm: LoopbackServer;
  let provider: ReturnType<typeof azureMetadata>;
  before(async () => {
    imds = azureImdsFake(cloud);
    arm = azureArmFake(cloud);
    provider = azureMetadata({ imdsBaseUrl: await imds.start(), armBaseUrl: await arm.start(), policy: { backoffMs: 5 } });
  });
  after(async () => {
    await imds.stop();
    await arm.stop();
  });

  it('self from IMDS /metadata/instance with Metadata: true', async () => {
    assert.deepEqual(await provider.self(), {
      Name: 'cp000001',
      ProviderID: `azure://${azureVmId(cloud, cloud.self.scaleSet, 1)}`,
      Role: 'ControlPlane',
      VPCIP: '10.9.0.6',
      SecondaryIPRange: '',
      AliasIPRanges: null,
    });
    assert.ok(imds.seen.every((r) => r.headers.metadata === 'true'));
  });

  it('uid and init secret hash from the tags; load balancer from /metadata/loadbalancer', async () => {
    assert.equal(await provider.uid(), UID);
    assert.equal(await provider.initSecretHash(), HASH);
    assert.deepEqual(await provider.getLoadBalancerEndpoint(), { host: '20.61.1.2', port: '6443' });
  });

  it('list: scale sets tagged with the uid, their VMs (all pages) and NIC addresses, with the managed-identity token', async () => {
    const peers = await provider.list();
    assert.deepEqual(
      peers.map((p) => [p.Name, p.Role, p.VPCIP]),
      [
        ['cp000000', 'ControlPlane', '10.9.0.5'],
        ['cp000001', 'ControlPlane', '10.9.0.6'],
        ['wk000000', 'Worker', '10.9.0.7'],
      ],
    );
    assert.equal(peers[2]!.ProviderID, `azure://${azureVmId(cloud, cloud.scaleSets[1]!.name, 0)}`);
    assert.ok(arm.seen.some((r) => r.url.includes('page=1')), 'nextLink followed');
    assert.equal(imds.seen.filter((r) => r.url.startsWith('/metadata/identity')).length, 1, 'token cached');
  });

  it('transient IMDS failures (503) are retried', async () => {
    imds.failNext = 2;
    assert.equal(await provider.uid(), UID);
  });

  it('ARM refusing the token (401): typed error without the token in message, details or causes', async () => {
    const strictArm = azureArmFake({ ...cloud, token: 'a-different-token' });
    try {
      const p = azureMetadata({ imdsBaseUrl: imds.url, armBaseUrl: await strictArm.start(), policy: { backoffMs: 1 } });
      const err = await p.list().then(
        () => assert.fail('expected a refusal'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof MetadataError && err.code === 'METADATA_UNAVAILABLE' && err.details.status === 401);
      assert.deepEqual(findSecretLeaks(`${err.message} ${JSON.stringify(err.toJSON())}`, [{ name: 'managed-identity token', value: cloud.token }]), []);
      assert.equal(strictArm.seen.length, 1, '401 is not retried');
    } finally {
      await strictArm.stop();
    }
  });

  it('a nextLink to another host is refused (the token stays on ARM)', async () => {
    const evil = azureArmFake({ ...cloud });
    const redirecting = new LoopbackServer((req) => {
      if (req.url.includes('/virtualMachineScaleSets?')) return { status: 200, body: JSON.stringify({ value: [], nextLink: `${evil.url}/x` }) };
      return { status: 404 };
    });
    try {
      await evil.start();
      const p = azureMetadata({ imdsBaseUrl: imds.url, armBaseUrl: await redirecting.start() });
      await assert.rejects(p.list(), (e: unknown) => e instanceof MetadataError && e.code === 'METADATA_MALFORMED');
      assert.equal(evil.seen.length, 0);
    } finally {
      await redirecting.stop();
      await evil.stop();
    }
  });
});

describe('AzureMetadata off Azure and on bad input', () => {
  it('IMDS absent: "not on Azure: IMDS not reachable at ..."', async () => {
    const url = await closedLoopbackPort();
    await assert.rejects(azureMetadata({ imdsBaseUrl: url, policy: { attempts: 2, backoffMs: 5 } }).self(), (e: unknown) => {
      assert.ok(e instanceof MetadataError);
      assert.equal(e.code, 'METADATA_ENDPOINT_ABSENT');
      assert.match(e.message, new RegExp(`^not on Azure: IMDS not reachable at ${url} \\(connect ECONNREFUSED`));
      return true;
    });
  });

  const cases: { name: string; doc: unknown; field: RegExp }[] = [
    { name: 'no compute section', doc: { network: {} }, field: /no compute section/ },
    { name: 'resourceId missing', doc: { compute: { name: 'a', subscriptionId: 's', resourceGroupName: 'r' }, network: {} }, field: /resourceId/ },
    { name: 'no private IP', doc: { compute: { name: 'a', resourceId: '/x', subscriptionId: 's', resourceGroupName: 'r' }, network: { interface: [] } }, field: /private IPv4/ },
    { name: 'tagsList not a list', doc: { compute: { name: 'a', resourceId: '/x', subscriptionId: 's', resourceGroupName: 'r', tagsList: 'x' } }, field: /tagsList/ },
  ];
  for (const c of cases) {
    it(`malformed instance document: ${c.name}`, () => {
      assert.throws(() => parseAzureInstance(c.doc), (e: unknown) => e instanceof MetadataError && e.code === 'METADATA_MALFORMED' && c.field.test(e.message));
    });
  }
});
