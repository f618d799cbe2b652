import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createLogger } from '@asterism/logger';
import { ComponentInstallError } from '../components/index.js';
import { NodeSnapshot } from './node-snapshot.js';
import { recoverInterruptedStep, runUpgradeStep, type StepComponent, type StepDeps, type StepRequest } from './upgrade-step.js';

const hash = (s: string) => `sha256:${createHash('sha256').update(s).digest('hex')}`;
const BINS = ['kubelet', 'kubeadm', 'kubectl'];

/** A node root with v1.34 binaries and manifests; the fake installer writes `<name>-v1.35` unless told to fail. */
async function node(opts: { installFails?: boolean; kubeadmFails?: boolean; kubeletUnhealthy?: boolean } = {}) {
  const root = await mkdtemp(join(tmpdir(), 'upgrade-step-'));
  const resolve = (p: string) => join(root, p);
  const put = async (p: string, text: string) => (await mkdir(dirname(resolve(p)), { recursive: true }), writeFile(resolve(p), text));
  for (const b of BINS) await put(`/run/state/bin/${b}`, `${b}-v1.34`);
  await put('/etc/kubernetes/manifests/kube-apiserver.yaml', 'spec:\n  containers:\n  - image: localhost/asterism/kube-apiserver:v1.34.4\n');
  await put('/var/lib/kubelet/config.yaml', 'v1.34 config');
  const events: string[] = [];
  const components: StepComponent[] = BINS.map((b) => ({ url: `http://a/v1.35.4/${b}`, hash: hash(`${b}-v1.35`), installPath: `/run/state/bin/${b}`, extract: false }));
  const deps: StepDeps = {
    install: async (list) => {
      events.push(`install ${list.length}`);
      if (opts.installFails) throw new ComponentInstallError('HASH_MISMATCH', 'component kubeadm: artifact has hash sha256:bad, expected ...; nothing was installed');
      for (const c of list) await put(c.installPath, `${c.installPath.split('/').pop()}-v1.35`);
    },
    kubeadm: async (args) => {
      events.push(`kubeadm ${args.slice(0, 3).join(' ')}`);
      await put('/etc/kubernetes/manifests/kube-apiserver.yaml', 'spec:\n  containers:\n  - image: localhost/asterism/kube-apiserver:v1.35.4\n');
      await put('/var/lib/kubelet/config.yaml', 'v1.35 config');
      if (opts.kubeadmFails) throw new Error('kubeadm upgrade apply exited 1: [upgrade/apply] FATAL');
    },
    kubelet: {
      restart: async () => void events.push('kubelet restart'),
      waitHealthy: async () => {
        events.push('kubelet healthz');
        if (opts.kubeletUnhealthy && (await readFile(resolve('/run/state/bin/kubelet'), 'utf8')).endsWith('v1.35')) throw new Error('the kubelet is not healthy after 1 s');
      },
    },
    snapshot: new NodeSnapshot(resolve),
    logger: createLogger({ component: 'test', level: 'error' }),
    ignorePreflightErrors: [],
    patchesDir: '/opt/kubernetes/patches',
  };
  const text = (p: string) => readFile(resolve(p), 'utf8');
  return { root, deps, events, components, text };
}

const roots: string[] = [];
after(async () => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))));

describe('upgrade agent step (backup, components, kubeadm, kubelet; restore on failure) on a node folder', () => {
  const req = (components: StepComponent[], step: StepRequest['step'] = 'apply'): StepRequest => ({ target: 'v1.35.4', step, components });

  it('upgrades, then a second identical request finds the end state and does nothing', async () => {
    const n = await node();
    roots.push(n.root);
    assert.deepEqual(await runUpgradeStep(n.deps, req(n.components)), { outcome: 'upgraded' });
    assert.deepEqual(n.events, ['install 3', 'kubeadm upgrade apply v1.35.4', 'kubelet restart', 'kubelet healthz']);
    assert.equal(await n.text('/run/state/bin/kubelet'), 'kubelet-v1.35');
    n.events.length = 0;
    assert.deepEqual(await runUpgradeStep(n.deps, req(n.components)), { outcome: 'already' });
    assert.deepEqual(n.events, []);
  });

  it('a hash mismatch installs nothing and leaves the node as it was; the result names the stage and the code', async () => {
    const n = await node({ installFails: true });
    roots.push(n.root);
    const r = await runUpgradeStep(n.deps, req(n.components, 'node'));
    assert.deepEqual({ ...r, message: undefined }, { outcome: 'failed', failedStep: 'components', code: 'HASH_MISMATCH', message: undefined, rolledBack: true });
    assert.equal(await n.text('/run/state/bin/kubeadm'), 'kubeadm-v1.34');
    assert.ok(!n.events.includes('kubelet restart'), 'the running kubelet is left alone');
    assert.equal(await n.deps.snapshot.journal(), undefined, 'no step left in progress');
  });

  it('a failed kubeadm restores binaries, manifests and the kubelet configuration', async () => {
    const n = await node({ kubeadmFails: true });
    roots.push(n.root);
    const r = await runUpgradeStep(n.deps, req(n.components));
    assert.equal(r.outcome, 'failed');
    assert.equal(r.outcome === 'failed' && r.failedStep, 'kubeadm');
    assert.equal(r.outcome === 'failed' && r.code, 'KUBEADM_FAILED');
    assert.equal(await n.text('/run/state/bin/kubelet'), 'kubelet-v1.34');
    assert.match(await n.text('/etc/kubernetes/manifests/kube-apiserver.yaml'), /kube-apiserver:v1\.34\.4/);
    assert.equal(await n.text('/var/lib/kubelet/config.yaml'), 'v1.34 config');
  });

  it('a new kubelet that is not healthy is replaced by the old one and restarted', async () => {
    const n = await node({ kubeletUnhealthy: true });
    roots.push(n.root);
    const r = await runUpgradeStep(n.deps, req(n.components, 'node'));
    assert.equal(r.outcome === 'failed' && r.code, 'KUBELET_UNHEALTHY');
    assert.equal(r.outcome === 'failed' && r.rolledBack, true);
    assert.equal(await n.text('/run/state/bin/kubelet'), 'kubelet-v1.34');
    assert.deepEqual(n.events.slice(-2), ['kubelet restart', 'kubelet healthz']);
  });

  it('an agent starting after a step was interrupted (reboot, crash) restores the node first', async () => {
    const n = await node();
    roots.push(n.root);
    await n.deps.snapshot.backup();
    await n.deps.snapshot.record({ target: 'v1.35.4', step: 'node', phase: 'started', startedAt: new Date().toISOString() });
    await n.deps.install(n.components);
    assert.equal(await recoverInterruptedStep(n.deps), true);
    assert.equal(await n.text('/run/state/bin/kubeadm'), 'kubeadm-v1.34');
    assert.equal(await recoverInterruptedStep(n.deps), false, 'nothing left to restore');
  });

  it('images only: the image components are installed, nothing else', async () => {
    const n = await node();
    roots.push(n.root);
    const image = { url: 'http://a/v1.35.4/images/kube-proxy.tar', hash: hash('x'), installPath: `/run/state/images/localhost/asterism/kube-proxy:v1.35.4@sha256:${'b'.repeat(64)}`, extract: false };
    assert.deepEqual(await runUpgradeStep(n.deps, req([...n.components, image], 'images')), { outcome: 'images-staged' });
    assert.deepEqual(n.events, ['install 1']);
  });
});
