/** The bootstrapper's --csp / --metadata selection, exercised against the cloud fakes of @asterism/metadata. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MetadataError } from '@asterism/metadata';
import { awsImdsFake, azureArmFake, azureImdsFake, closedLoopbackPort, gcpComputeFake, gcpMetadataFake, type LoopbackServer } from '@asterism/metadata/testing';
import { parseFlags } from './flags.js';
import { metadataFor } from './metadata-source.js';

const HASH = '$2a$10$bootstrapperbootstrapperb0123456789abcdefghijklmnopqrs';

describe('bootstrapper metadata provider by --csp', () => {
  const servers: LoopbackServer[] = [];
  const urls: Record<string, { metadata: string; api?: string }> = {};
  before(async () => {
    const aws = awsImdsFake({ instanceId: 'i-0abc', region: 'eu-central-1', availabilityZone: 'eu-central-1a', privateIp: '10.0.1.5', imageId: 'ami-1', hostname: 'ip-10-0-1-5.eu-central-1.compute.internal', tags: { 'constellation-role': 'worker', 'constellation-init-secret-hash': HASH } });
    const az = { subscriptionId: 's', resourceGroup: 'rg', scaleSets: [{ name: 'workers', tags: { 'constellation-role': 'worker', 'constellation-init-secret-hash': HASH }, vms: [{ computerName: 'wk0', ip: '10.9.0.7' }] }], self: { scaleSet: 'workers', index: 0 }, loadBalancerIp: '20.0.0.1', token: 't' };
    const gcp = { project: 'p', projectNumber: '1', instances: [{ name: 'n0', zone: 'us-central1-a', ip: '192.168.1.2', aliasIpRanges: [], labels: { 'constellation-role': 'worker' }, attributes: { 'constellation-init-secret-hash': HASH } }], self: 'n0', forwardingRules: [], token: 't' };
    const azImds = azureImdsFake(az);
    const gcpMd = gcpMetadataFake(gcp);
    const gcpApi = gcpComputeFake(gcp);
    servers.push(aws, azImds, azureArmFake(az), gcpMd, gcpApi);
    for (const s of servers) await s.start();
    urls.AWS = { metadata: aws.url };
    urls.Azure = { metadata: azImds.url };
    urls.GCP = { metadata: gcpMd.url, api: gcpApi.url };
  });
  after(async () => {
    for (const s of servers) await s.stop();
  });

  const cases: { csp: string; name: string; vpcIp: string }[] = [
    { csp: 'aws', name: 'ip-10-0-1-5.eu-central-1.compute.internal', vpcIp: '10.0.1.5' },
    { csp: 'Azure', name: 'wk0', vpcIp: '10.9.0.7' },
    { csp: 'GCP', name: 'n0', vpcIp: '192.168.1.2' },
  ];
  for (const c of cases) {
    it(`--csp ${c.csp}: self and init secret hash from the ${c.csp} fake`, async () => {
      const u = urls[c.csp === 'aws' ? 'AWS' : c.csp]!;
      const cfg = parseFlags(['--attestation-variant=dummy', `--csp=${c.csp}`, `--metadata=${u.metadata}`, ...(u.api ? [`--cloud-api-url=${u.api}`] : [])], {})!;
      const md = metadataFor(cfg);
      const self = await md.self();
      assert.deepEqual([self.Name, self.Role, self.VPCIP], [c.name, 'Worker', c.vpcIp]);
      assert.equal(await md.initSecretHash(), HASH);
    });
  }

  it('--csp AWS without --metadata uses the link-local IMDS (flag default is empty)', () => {
    assert.equal(parseFlags(['--attestation-variant=dummy', '--csp=AWS'], {})!.metadata, '');
    assert.equal(parseFlags(['--attestation-variant=dummy'], {})!.metadata, 'http://10.42.0.1:8080');
  });

  it('--cloud-api-url needs a cloud --csp', () => {
    assert.throws(() => parseFlags(['--attestation-variant=dummy', '--cloud-api-url=http://127.0.0.1:1'], {}), /invalid --cloud-api-url/);
  });

  it('off the cloud: METADATA_ENDPOINT_ABSENT naming the cloud', async () => {
    const url = await closedLoopbackPort();
    const md = metadataFor({ csp: 'GCP', metadata: url, nodeName: undefined, cloudApiUrl: undefined });
    await assert.rejects(md.self(), (e: unknown) => e instanceof MetadataError && e.code === 'METADATA_ENDPOINT_ABSENT' && e.message.startsWith(`not on GCP: metadata server not reachable at ${url}`));
  });
});
