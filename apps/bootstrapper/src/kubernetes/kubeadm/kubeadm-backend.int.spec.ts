/**
 * The kubeadm backend's configurations checked by the REAL kubeadm of tools/k8s-testenv
 * (`kubeadm config validate`), and the command sequence it runs.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { controlPlaneBinaries, testenvUnavailable } from '@asterism/k8s-testenv';
import { createLogger } from '@asterism/logger';
import type { InstanceMetadata, MetadataProvider } from '@asterism/metadata';
import { NodeFileWriter } from '../../state/file-writer.js';
import { KubeadmBackend, spawnRunner } from './kubeadm-backend.js';

const skip = testenvUnavailable();

function writeSelfSignedCa(dir: string): void {
  mkdirSync(dir, { recursive: true });
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=kubernetes', '-days', '1', '-keyout', join(dir, 'ca.key'), '-out', join(dir, 'ca.crt')], { stdio: 'ignore' });
}
const logger = createLogger({ component: 'test', level: 'error' });
const self: InstanceMetadata = { Name: 'Control_Plane-0', ProviderID: 'qemu:///hostname/control-plane-0', Role: 'ControlPlane', VPCIP: '10.42.0.2', SecondaryIPRange: '', AliasIPRanges: null };
const metadata: MetadataProvider = {
  self: async () => self,
  list: async () => [self],
  getLoadBalancerEndpoint: async () => ({ host: '10.42.0.100', port: '6443' }),
  initSecretHash: async () => '',
  uid: async () => '',
};
const initReq = { kubernetesVersion: 'v1.34.4', clusterName: 'asterism', conformanceMode: false, components: [], apiServerCertSans: ['', 'cluster.example', '192.0.2.9'], serviceCidr: '10.96.0.0/12', node: { name: 'control-plane-0', role: 'ControlPlane' as const, ip: self.VPCIP, providerId: self.ProviderID } };
const joinReq = {
  apiServerEndpoint: '10.42.0.2:6443',
  token: 'abcdef.0123456789abcdef',
  caCertHashes: [`sha256:${'ab'.repeat(32)}`],
  role: 'Worker' as const,
  nodeName: 'worker-0',
  nodeIp: '10.42.0.3',
  providerId: 'qemu:///hostname/worker-0',
  components: [],
  kubeletCertPem: Buffer.alloc(0),
  kubeletKeyPem: '',
};

describe('kubeadm backend', { skip }, () => {
  const kubeadm = skip ? '' : controlPlaneBinaries().kubeadm;
  const validate = async (yaml: string) => {
    const file = join(mkdtempSync(join(tmpdir(), 'kubeadm-cfg-')), 'c.yaml');
    writeFileSync(file, yaml);
    return spawnRunner(kubeadm, ['config', 'validate', '--config', file]);
  };

  it('generates init and join configurations the real kubeadm accepts', async () => {
    const backend = new KubeadmBackend({ kubeadm, metadata, csp: 'QEMU', logger, files: new NodeFileWriter(mkdtempSync(join(tmpdir(), 'kubeadm-root-'))) });
    await validate(await backend.initConfig(initReq));
    await validate(await backend.joinConfig(joinReq));
    await validate(await backend.joinConfig({ ...joinReq, role: 'ControlPlane' }));
    const nodeRuntime = new KubeadmBackend({ kubeadm, metadata, csp: 'QEMU', logger, files: new NodeFileWriter(mkdtempSync(join(tmpdir(), 'kubeadm-root-'))), imageRepository: 'localhost/asterism', ignorePreflightErrors: ['Swap'], kubeProxyConntrackMaxPerCore: 0 });
    const yaml = await nodeRuntime.initConfig({ ...initReq, conformanceMode: true });
    assert.match(yaml, /kind: KubeProxyConfiguration[\s\S]*maxPerCore: 0/);
    assert.match(yaml, /imageRepository: localhost\/asterism/);
    await validate(yaml);
  });

  it('a broken configuration is rejected by the same check (the check can fail)', async () => {
    const backend = new KubeadmBackend({ kubeadm, metadata, csp: 'QEMU', logger, files: new NodeFileWriter(mkdtempSync(join(tmpdir(), 'kubeadm-root-'))) });
    const yaml = (await backend.initConfig(initReq)).replace('kubernetesVersion: v1.34.4', 'kubernetesVersion: not-a-version');
    await assert.rejects(validate(yaml), /not-a-version|version/i);
  });

  it('runs the reference phases in order and returns the admin kubeconfig from kubeadm', async () => {
    const calls: string[][] = [];
    const root = mkdtempSync(join(tmpdir(), 'kubeadm-root-'));
    const written: string[] = [];
    const backend = new KubeadmBackend({
      kubeadm: '/run/state/bin/kubeadm',
      metadata,
      csp: 'QEMU',
      logger,
      files: new NodeFileWriter(root),
      apiReadiness: { wait: async () => void calls.push(['<api ready>']) },
      clusterObjects: { write: async (o) => void written.push(`${o.nodeName} ${o.kubernetesVersion}`) },
      run: async (_bin, args) => {
        calls.push(args.map((a) => a.replace(/--config=.*/, '--config=<file>')));
        // kubeadm's certificate phase creates the cluster CA the backend then signs its kubelet certificate with.
        if (args.includes('certs')) writeSelfSignedCa(join(root, 'etc/kubernetes/pki'));
        return args[0] === 'kubeconfig' ? 'apiVersion: v1\nkind: Config\n' : '';
      },
    });
    const kc = await backend.initCluster(initReq);
    assert.equal(kc.toString(), 'apiVersion: v1\nkind: Config\n');
    assert.deepEqual(calls, [
      ['init', 'phase', 'preflight', '-v=5', '--config=<file>'],
      ['init', 'phase', 'certs', 'all', '-v=5', '--config=<file>'],
      ['init', '-v=5', '--config=<file>', '--skip-phases=preflight,certs,addon/coredns,addon/kube-proxy'],
      ['kubeconfig', 'user', '--client-name=asterism-admin', '--config=<file>', '--org=system:masters'],
      ['<api ready>'],
    ]);
    assert.deepEqual(written, ['control-plane-0 v1.34.4']);
    assert.match(readFileSync(join(root, 'etc/kubernetes/audit-policy.yaml'), 'utf8'), /kind: Policy/);
    const kubeletCert = new X509Certificate(readFileSync(join(root, 'run/state/kubelet/pki/kubelet-client-crt.pem')));
    assert.match(kubeletCert.subject, /CN=system:node:control-plane-0/);
    assert.ok(kubeletCert.checkIssued(new X509Certificate(readFileSync(join(root, 'etc/kubernetes/pki/ca.crt')))));
    calls.length = 0;
    await backend.joinCluster({ ...joinReq, role: 'ControlPlane' });
    assert.deepEqual(calls, [['join', '-v=5', '--config=<file>', '--skip-phases=control-plane-prepare/download-certs']]);
  });
});
