/**
 * The joinservice process with --csp aws|azure|gcp against loopback fakes of each cloud's metadata
 * service (and the Compute Engine API for GCP): its API server endpoint in join tickets is
 * `<own VPC IP>:6443` from the provider (docs/protocol/cloud-metadata.md). Real control plane and keyservice.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DummyIssuer } from '@asterism/attestation';
import { atlsChannelCredentials } from '@asterism/atls';
import { testenvUnavailable } from '@asterism/k8s-testenv';
import { awsImdsFake, azureArmFake, azureImdsFake, closedLoopbackPort, gcpComputeFake, gcpMetadataFake, type LoopbackServer } from '@asterism/metadata/testing';
import { join as joinApi } from '@asterism/proto';
import { startTsProcess } from '@asterism/testing';
import { call, joinRequest, startHarness, type Harness } from './joinservice-harness.int.spec.js';

const skip = testenvUnavailable();

describe('joinservice --csp aws|azure|gcp: VPC IP from the cloud metadata provider', { skip }, () => {
  let h: Harness;
  const fakes: Record<string, LoopbackServer> = {
    aws: awsImdsFake({ instanceId: 'i-0cp', region: 'eu-central-1', availabilityZone: 'eu-central-1a', privateIp: '10.0.1.5', imageId: 'ami-1', hostname: 'ip-10-0-1-5', tags: { 'constellation-role': 'control-plane' } }),
    azure: azureImdsFake({ subscriptionId: 's', resourceGroup: 'rg', scaleSets: [{ name: 'cps', tags: { 'constellation-role': 'control-plane' }, vms: [{ computerName: 'cp0', ip: '10.9.0.5' }] }], self: { scaleSet: 'cps', index: 0 }, loadBalancerIp: '20.0.0.1', token: 't' }),
  };
  const gcpCloud = { project: 'p', projectNumber: '1', instances: [{ name: 'cp0', zone: 'europe-west3-b', ip: '192.168.178.2', aliasIpRanges: [], labels: { 'constellation-role': 'control-plane' }, attributes: {} }], self: 'cp0', forwardingRules: [], token: 't' };
  fakes.gcp = gcpMetadataFake(gcpCloud);
  const gcpCompute = gcpComputeFake(gcpCloud);
  const azureArm = azureArmFake({ subscriptionId: 's', resourceGroup: 'rg', scaleSets: [], self: { scaleSet: 'x', index: 0 }, loadBalancerIp: '', token: 't' });

  before(async () => {
    for (const f of [...Object.values(fakes), gcpCompute, azureArm]) await f.start();
    h = await startHarness('dummy', '{"measurements":{}}');
  });
  after(async () => {
    await h?.stop();
    for (const f of [...Object.values(fakes), gcpCompute, azureArm]) await f.stop();
  });

  const cases = [
    { csp: 'aws', vpcIp: '10.0.1.5', api: () => undefined },
    { csp: 'azure', vpcIp: '10.9.0.5', api: () => azureArm.url },
    { csp: 'gcp', vpcIp: '192.168.178.2', api: () => gcpCompute.url },
  ];
  for (const c of cases) {
    it(`--csp ${c.csp}: tickets carry <VPC IP from the ${c.csp} metadata fake>:6443`, async () => {
      const api = c.api();
      // The worker connects from 127.0.0.1, which the fakes do not list: the reference behaviour
      // (identity binding is tested in identity-binding.int.spec.ts).
      const js = await h.startJoinservice([`--csp=${c.csp}`, `--metadata-url=${fakes[c.csp]!.url}`, ...(api ? [`--cloud-api-url=${api}`] : []), '--identity-binding=off']);
      const client = new joinApi.APIClient(js.endpoint, atlsChannelCredentials({ issuer: new DummyIssuer() }));
      try {
        const { err, res } = await call<joinApi.IssueJoinTicketResponse>((cb) => client.issueJoinTicket(joinRequest(h.dir, `worker-${c.csp}`), cb));
        assert.equal(err, null, err?.details);
        assert.equal(res!.apiServerEndpoint, `${c.vpcIp}:6443`);
        assert.ok(fakes[c.csp]!.seen.length > 0);
      } finally {
        client.close();
        await js.process.stop();
      }
    });
  }

  it('--csp aws off AWS: exits 1 with "not on AWS: IMDS not reachable at ..."', async () => {
    const url = await closedLoopbackPort();
    const p = startTsProcess('apps/joinservice/src/main.ts', ['--csp=aws', '--attestation-variant=dummy', `--metadata-url=${url}`, `--config-dir=${h.configDir}`, `--kubeconfig=${h.cp.adminKubeconfigPath}`, '--host=127.0.0.1', '--port=0', '--metrics-port=-1']);
    const { code } = await p.exited;
    assert.equal(code, 1);
    assert.ok(p.stderrLines.some((l) => l.includes(`not on AWS: IMDS not reachable at ${url}`)), p.allOutput());
  });
});
