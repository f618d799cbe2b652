import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { cloudProviderFlag, initConfiguration, joinConfiguration } from './configs.js';

const docs = (yaml: string) => parseAllDocuments(yaml).map((d) => d.toJS() as Record<string, any>);

describe('kubeadm configurations (TestInitCluster / TestJoinCluster)', () => {
  const init = docs(
    initConfiguration({
      kubernetesVersion: 'v1.34.2',
      clusterName: 'kubernetes',
      nodeName: 'node-name',
      nodeIp: '192.0.2.1',
      providerId: 'provider-id',
      controlPlaneHost: '192.0.2.3',
      certSans: ['', 'example.com'],
      serviceCidr: '10.96.0.0/12',
      cloudProvider: cloudProviderFlag('qemu', 'init'),
    }),
  );

  it('has InitConfiguration, ClusterConfiguration and KubeletConfiguration', () => {
    assert.deepEqual(init.map((d) => d.kind), ['InitConfiguration', 'ClusterConfiguration', 'KubeletConfiguration']);
  });

  it('sets node name, kubelet args, endpoint and SANs', () => {
    const [i, c, k] = init;
    assert.equal(i!.nodeRegistration.name, 'node-name');
    assert.deepEqual(i!.nodeRegistration.kubeletExtraArgs, [
      { name: 'node-ip', value: '192.0.2.1' },
      { name: 'provider-id', value: 'provider-id' },
    ]);
    assert.equal(c!.clusterName, 'kubernetes');
    assert.equal(c!.controlPlaneEndpoint, '192.0.2.3');
    assert.deepEqual(c!.apiServer.certSANs, ['127.0.0.1', '192.0.2.1', 'example.com']);
    assert.equal(c!.networking.serviceSubnet, '10.96.0.0/12');
    assert.equal(c!.featureGates.ControlPlaneKubeletLocalMode, true);
    assert.equal(k!.tlsCertFile, '/run/state/kubelet/pki/kubelet-client-crt.pem');
    assert.equal(k!.registerWithTaints.length, 2);
  });

  it('omits controlPlaneEndpoint without a load balancer', () => {
    const [, c] = docs(initConfiguration({ kubernetesVersion: 'v1.30.0', clusterName: 'c', nodeName: 'n', nodeIp: '', providerId: '', controlPlaneHost: '', certSans: [], serviceCidr: '', cloudProvider: '' }));
    assert.equal(c!.controlPlaneEndpoint, undefined);
    assert.equal(c!.featureGates, undefined);
  });

  it('join: discovery, node IP and control-plane extras', () => {
    const worker = docs(joinConfiguration({ apiServerEndpoint: '192.0.2.3:6443', token: 'abcdef.0123456789abcdef', caCertHashes: ['sha256:x'], nodeName: 'metadata-name', nodeIp: '192.0.2.1', providerId: '', controlPlane: false, cloudProvider: '' }));
    assert.deepEqual(worker[0]!.discovery.bootstrapToken, { apiServerEndpoint: '192.0.2.3:6443', token: 'abcdef.0123456789abcdef', caCertHashes: ['sha256:x'] });
    assert.equal(worker[0]!.controlPlane, undefined);
    const cp = docs(joinConfiguration({ apiServerEndpoint: 'a:6443', token: 't', caCertHashes: [], nodeName: 'n', nodeIp: '192.0.2.1', providerId: '', controlPlane: true, cloudProvider: '' }));
    assert.deepEqual(cp[0]!.controlPlane, { localAPIEndpoint: { advertiseAddress: '192.0.2.1', bindPort: 6443 } });
    assert.deepEqual(cp[0]!.skipPhases, ['control-plane-prepare/download-certs']);
  });

  it('sets cloud-provider external like the reference (AWS only at init)', () => {
    assert.equal(cloudProviderFlag('AWS', 'init'), 'external');
    assert.equal(cloudProviderFlag('AWS', 'join'), '');
    assert.equal(cloudProviderFlag('gcp', 'join'), 'external');
    assert.equal(cloudProviderFlag('qemu', 'init'), '');
  });
});
