import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { cloudProviderFlag, initConfiguration, joinConfiguration } from './configs.js';

const docs = (yaml: string): unknown[] => parseAllDocuments(yaml).map((d) => d.toJS() as unknown);
/** The value at a dotted path of a parsed document (undefined where the path ends early). */
const at = (doc: unknown, path: string): unknown => path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], doc);

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
    assert.deepEqual(init.map((d) => at(d, 'kind')), ['InitConfiguration', 'ClusterConfiguration', 'KubeletConfiguration']);
  });

  it('sets node name, kubelet args, endpoint and SANs', () => {
    const [i, c, k] = init;
    assert.equal(at(i, 'nodeRegistration.name'), 'node-name');
    assert.deepEqual(at(i, 'nodeRegistration.kubeletExtraArgs'), [
      { name: 'node-ip', value: '192.0.2.1' },
      { name: 'provider-id', value: 'provider-id' },
    ]);
    assert.equal(at(c, 'clusterName'), 'kubernetes');
    assert.equal(at(c, 'controlPlaneEndpoint'), '192.0.2.3');
    assert.deepEqual(at(c, 'apiServer.certSANs'), ['127.0.0.1', '192.0.2.1', 'example.com']);
    assert.equal(at(c, 'networking.serviceSubnet'), '10.96.0.0/12');
    assert.equal(at(c, 'featureGates.ControlPlaneKubeletLocalMode'), true);
    assert.equal(at(k, 'tlsCertFile'), '/run/state/kubelet/pki/kubelet-client-crt.pem');
    assert.equal(at(k, 'registerWithTaints.length'), 2);
  });

  it('omits controlPlaneEndpoint without a load balancer', () => {
    const [, c] = docs(initConfiguration({ kubernetesVersion: 'v1.30.0', clusterName: 'c', nodeName: 'n', nodeIp: '', providerId: '', controlPlaneHost: '', certSans: [], serviceCidr: '', cloudProvider: '' }));
    assert.equal(at(c, 'kind'), 'ClusterConfiguration');
    assert.equal(at(c, 'controlPlaneEndpoint'), undefined);
    assert.equal(at(c, 'featureGates'), undefined);
  });

  it('join: discovery, node IP and control-plane extras', () => {
    const worker = docs(joinConfiguration({ apiServerEndpoint: '192.0.2.3:6443', token: 'abcdef.0123456789abcdef', caCertHashes: ['sha256:x'], nodeName: 'metadata-name', nodeIp: '192.0.2.1', providerId: '', controlPlane: false, cloudProvider: '' }));
    assert.deepEqual(at(worker[0], 'discovery.bootstrapToken'), { apiServerEndpoint: '192.0.2.3:6443', token: 'abcdef.0123456789abcdef', caCertHashes: ['sha256:x'] });
    assert.equal(at(worker[0], 'kind'), 'JoinConfiguration');
    assert.equal(at(worker[0], 'controlPlane'), undefined);
    const cp = docs(joinConfiguration({ apiServerEndpoint: 'a:6443', token: 't', caCertHashes: [], nodeName: 'n', nodeIp: '192.0.2.1', providerId: '', controlPlane: true, cloudProvider: '' }));
    assert.deepEqual(at(cp[0], 'controlPlane'), { localAPIEndpoint: { advertiseAddress: '192.0.2.1', bindPort: 6443 } });
    assert.deepEqual(at(cp[0], 'skipPhases'), ['control-plane-prepare/download-certs']);
  });

  it('sets cloud-provider external like the reference (AWS only at init)', () => {
    assert.equal(cloudProviderFlag('AWS', 'init'), 'external');
    assert.equal(cloudProviderFlag('AWS', 'join'), '');
    assert.equal(cloudProviderFlag('gcp', 'join'), 'external');
    assert.equal(cloudProviderFlag('qemu', 'init'), '');
  });
});
