/**
 * The kubeadm backend installs the request's/ticket's components (real ComponentInstaller, real
 * files) before it runs kubeadm, and a tampered artifact ends init and join before kubeadm ran.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createNopLogger } from '@asterism/logger';
import type { InstanceMetadata, MetadataProvider } from '@asterism/metadata';
import { ComponentInstaller } from '../../components/index.js';
import { NodeFileWriter } from '../../state/file-writer.js';
import { KubeadmBackend, type CommandRunner } from './kubeadm-backend.js';

const self: InstanceMetadata = { Name: 'worker-0', ProviderID: 'qemu:///hostname/worker-0', Role: 'Worker', VPCIP: '10.42.0.3', SecondaryIPRange: '', AliasIPRanges: null };
const metadata: MetadataProvider = {
  self: async () => self,
  list: async () => [self],
  getLoadBalancerEndpoint: async () => ({ host: '', port: '' }),
  initSecretHash: async () => '',
  uid: async () => '',
};
const sha = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

describe('kubeadm backend with components', () => {
  let dir: string;
  const kubeadmBytes = Buffer.from('#!/bin/sh\necho kubeadm v1.34.4\n');
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubeadm-components-'));
    await writeFile(join(dir, 'kubeadm'), kubeadmBytes);
    await writeFile(join(dir, 'kubeadm-tampered'), Buffer.concat([kubeadmBytes.subarray(0, -2), Buffer.from('X\n')]));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const setup = async () => {
    const root = await mkdtemp(join(dir, 'root-'));
    const files = new NodeFileWriter(root);
    const calls: { binary: string; args: string[]; installed: boolean; patchesDir: boolean }[] = [];
    const run: CommandRunner = async (binary, args) => {
      calls.push({ binary, args, installed: existsSync(binary), patchesDir: existsSync(files.resolve('/opt/kubernetes/patches')) });
      return '';
    };
    const backend = new KubeadmBackend({
      kubeadm: files.resolve('/run/state/bin/kubeadm'),
      metadata,
      csp: 'QEMU',
      logger: createNopLogger(),
      files,
      run,
      installer: new ComponentInstaller({ logger: createNopLogger(), resolve: (p) => files.resolve(p) }),
    });
    return { root, backend, calls };
  };
  const component = (file: string) => ({ url: pathToFileURL(join(dir, file)).toString(), hash: sha(kubeadmBytes), installPath: '/run/state/bin/kubeadm', extract: false });
  const joinReq = (file: string) => ({
    apiServerEndpoint: '10.42.0.2:6443',
    token: 'abcdef.0123456789abcdef',
    caCertHashes: [`sha256:${'ab'.repeat(32)}`],
    role: 'Worker' as const,
    nodeName: 'worker-0',
    nodeIp: '10.42.0.3',
    providerId: self.ProviderID,
    components: [component(file)],
    kubeletCertPem: Buffer.alloc(0),
    kubeletKeyPem: '',
  });

  it('join: installs kubeadm from the ticket, then runs the installed kubeadm', async () => {
    const { root, backend, calls } = await setup();
    await backend.joinCluster(joinReq('kubeadm'));
    assert.deepEqual(await readFile(join(root, 'run/state/bin/kubeadm')), kubeadmBytes);
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.binary, join(root, 'run/state/bin/kubeadm'));
    assert.equal(calls[0]!.installed, true);
    assert.equal(calls[0]!.args[0], 'join');
    assert.ok(calls[0]!.patchesDir, 'the patches folder the configuration names exists when kubeadm runs (kubeadm refuses a missing one)');
  });

  it("join: a worker leaves out the control plane's images; a control plane does not (this node has no image store, so an image it keeps fails the install)", async () => {
    const etcd = { url: pathToFileURL(join(dir, 'kubeadm')).toString(), hash: sha(kubeadmBytes), installPath: `/run/state/images/localhost/asterism/etcd:3.6.6-0@sha256:${'c'.repeat(64)}`, extract: false };
    const worker = await setup();
    await worker.backend.joinCluster({ ...joinReq('kubeadm'), components: [component('kubeadm'), etcd] });
    assert.equal(worker.calls[0]!.args[0], 'join');
    const cp = await setup();
    await assert.rejects(cp.backend.joinCluster({ ...joinReq('kubeadm'), role: 'ControlPlane', components: [component('kubeadm'), etcd] } as never), /IMAGE_IMPORT_FAILED|no container runtime/);
    assert.deepEqual(cp.calls, []);
  });

  it('join: a tampered artifact fails before kubeadm runs, naming the component and both hashes', async () => {
    const { root, backend, calls } = await setup();
    const tampered = await readFile(join(dir, 'kubeadm-tampered'));
    await assert.rejects(backend.joinCluster(joinReq('kubeadm-tampered')), (e: unknown) => {
      const m = (e as Error).message;
      assert.match(m, /^installing components: component kubeadm-tampered: /);
      assert.ok(m.includes(sha(kubeadmBytes)) && m.includes(sha(tampered)), m);
      return true;
    });
    assert.deepEqual(calls, []);
    assert.equal(existsSync(join(root, 'run/state/bin/kubeadm')), false);
  });

  it('init: a tampered artifact fails before kubeadm runs', async () => {
    const { backend, calls } = await setup();
    const req = { kubernetesVersion: 'v1.34.4', clusterName: 'asterism', conformanceMode: false, components: [component('kubeadm-tampered')], apiServerCertSans: [], serviceCidr: '', node: { name: 'worker-0', role: 'Worker' as const, ip: self.VPCIP, providerId: self.ProviderID } };
    await assert.rejects(backend.initCluster(req), /installing components: component kubeadm-tampered: .*has hash sha256:[0-9a-f]{64}, expected sha256:[0-9a-f]{64}/);
    assert.deepEqual(calls, []);
  });
});
