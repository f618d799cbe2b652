import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { upgradeagent, type components } from '@asterism/proto';
import type { AgentStep } from './agent-client.js';
import type { VersionRecord } from './cluster-version.js';
import type { ClusterFacts } from './plan.js';
import { applyUpgrade, UpgradeApplyError, type NodeState, type RolloutDeps } from './rollout.js';

const FROM = 'v1.34.4';
const TO = 'v1.35.4';
const SUPPORTED = [FROM, TO];
const LIST: components.Component[] = [{ url: 'http://a/v1.35.4/kubeadm', hash: `sha256:${'a'.repeat(64)}`, installPath: '/run/state/bin/kubeadm', extract: false }];

/** An in-memory cluster of named nodes whose agents upgrade the kubelet version (or fail on `failOn`). */
class FakeCluster {
  record: VersionRecord = { clusterVersion: FROM, componentsReference: 'k8s-components-old' };
  nodes = new Map<string, NodeState & { controlPlane: boolean }>();
  calls: string[] = [];
  failOn: string | undefined;

  constructor(names: [string, boolean][]) {
    for (const [i, [n, cp]] of names.entries()) this.nodes.set(n, { ready: true, kubeletVersion: FROM, unschedulable: false, address: `10.0.0.${i}`, controlPlane: cp });
  }

  deps(lines: string[] = []): RolloutDeps {
    const facts = async (): Promise<ClusterFacts> => ({
      clusterVersion: this.record.clusterVersion,
      nodes: [...this.nodes].map(([name, n]) => ({ name, controlPlane: n.controlPlane, ready: n.ready, kubeletVersion: n.kubeletVersion })),
      etcd: [...this.nodes].filter(([, n]) => n.controlPlane).map(([name]) => ({ node: name, ready: true })),
      joining: [],
    });
    return {
      facts,
      versionRecord: async () => structuredClone(this.record),
      currentComponents: async () => LIST,
      targetComponents: () => LIST,
      recordTarget: async (from, target) => {
        this.calls.push(`record ${from}->${target}`);
        this.record = { ...this.record, inProgress: { from, to: target, components: 'k8s-components-new' } };
        return 'k8s-components-new';
      },
      recordClusterVersion: async (target, name) => {
        this.calls.push(`nodeversion ${target} ${name}`);
        this.record = { ...this.record, clusterVersion: target, componentsReference: name };
      },
      recordFinished: async () => {
        this.calls.push('finished');
        delete this.record.inProgress;
      },
      node: async (name) => ({ ...this.nodes.get(name)! }),
      cordon: async (name, u) => {
        this.calls.push(`${u ? 'cordon' : 'uncordon'} ${name}`);
        this.nodes.get(name)!.unschedulable = u;
      },
      drain: async (name) => (this.calls.push(`drain ${name}`), []),
      agentStep: async (address, step: AgentStep) => {
        const [name, node] = [...this.nodes].find(([, n]) => n.address === address)!;
        this.calls.push(`agent ${name} ${upgradeagent.Step[step.step]}`);
        const base = { failedStep: '', errorCode: '', errorMessage: '', rolledBack: false, durationMs: 1 };
        if (step.step === upgradeagent.Step.STEP_IMAGES) return { ...base, outcome: 'images-staged' };
        if (this.failOn === name) return { ...base, outcome: 'failed', failedStep: 'components', errorCode: 'HASH_MISMATCH', errorMessage: 'component kubeadm: artifact has hash sha256:bad', rolledBack: true };
        if (node.kubeletVersion === step.kubernetesVersion) return { ...base, outcome: 'already' };
        node.kubeletVersion = step.kubernetesVersion;
        return { ...base, outcome: 'upgraded' };
      },
      upgradeServices: async () => (this.calls.push('helm'), 'services upgraded'),
      supported: SUPPORTED,
      say: (l) => lines.push(l),
      pollMs: 1,
    };
  }
}

const nodeSteps = (c: FakeCluster) => c.calls.filter((x) => x.startsWith('agent') && !x.endsWith('STEP_IMAGES'));

describe('upgrade apply rollout (orchestrator over fakes; the real cluster runs in tools/local-cluster e2e/upgrade-checks.ts)', () => {
  it('records the target first, stages images everywhere, then one node at a time in plan order: cordon, drain, step, uncordon; Helm last', async () => {
    const c = new FakeCluster([['worker-0', false], ['control-plane-1', true], ['control-plane-0', true]]);
    const report = await applyUpgrade(c.deps(), TO);
    assert.equal(c.calls[0], `record ${FROM}->${TO}`);
    assert.deepEqual(nodeSteps(c), ['agent control-plane-0 STEP_APPLY', 'agent control-plane-1 STEP_NODE', 'agent worker-0 STEP_NODE']);
    const cp0 = c.calls.indexOf('agent control-plane-0 STEP_APPLY');
    assert.deepEqual(c.calls.slice(cp0 - 2, cp0 + 2), ['cordon control-plane-0', 'drain control-plane-0', 'agent control-plane-0 STEP_APPLY', 'uncordon control-plane-0']);
    assert.ok(c.calls.lastIndexOf('agent worker-0 STEP_IMAGES') < cp0, 'images staged on every node before the first node step');
    assert.deepEqual(c.calls.slice(-2), ['helm', 'finished']);
    assert.deepEqual(Object.keys(report.nodeSeconds), ['control-plane-0', 'control-plane-1', 'worker-0']);
    assert.ok([...c.nodes.values()].every((n) => n.kubeletVersion === TO && !n.unschedulable));
  });

  it('the NodeVersion moves to the target only once the first control plane is Ready on it (joining nodes never get a version newer than the API server)', async () => {
    const c = new FakeCluster([['worker-0', false], ['control-plane-1', true], ['control-plane-0', true]]);
    await applyUpgrade(c.deps(), TO);
    const moved = c.calls.indexOf(`nodeversion ${TO} k8s-components-new`);
    assert.ok(moved > c.calls.indexOf('uncordon control-plane-0'), 'after the first control plane');
    assert.ok(moved < c.calls.indexOf('agent control-plane-1 STEP_NODE'), 'before the second node');
    assert.equal(c.calls.filter((x) => x.startsWith('nodeversion')).length, 1);
    assert.deepEqual(c.record, { clusterVersion: TO, componentsReference: 'k8s-components-new' });
  });

  it('a failed first control plane that was restored leaves the NodeVersion as it was and removes the upgrade mark', async () => {
    const c = new FakeCluster([['control-plane-0', true], ['worker-0', false]]);
    c.failOn = 'control-plane-0';
    const lines: string[] = [];
    await assert.rejects(applyUpgrade(c.deps(lines), TO), (e: unknown) => e instanceof UpgradeApplyError && e.code === 'NODE_STEP_FAILED');
    assert.deepEqual(c.record, { clusterVersion: FROM, componentsReference: 'k8s-components-old' });
    assert.ok(!c.calls.some((x) => x.startsWith('nodeversion')));
    assert.match(lines.join('\n'), /NodeVersion stays on v1\.34\.4 .*nodes joining now install v1\.34\.4/);
    // A later run is a fresh start, not a resume.
    c.failOn = undefined;
    c.calls = [];
    await applyUpgrade(c.deps(lines), TO);
    assert.equal(c.calls[0], `record ${FROM}->${TO}`);
    assert.equal(c.record.clusterVersion, TO);
  });

  it('a second run changes nothing', async () => {
    const c = new FakeCluster([['control-plane-0', true], ['worker-0', false]]);
    await applyUpgrade(c.deps(), TO);
    c.calls = [];
    const lines: string[] = [];
    const report = await applyUpgrade(c.deps(lines), TO);
    assert.equal(report.nothingToDo, true);
    assert.deepEqual(c.calls, []);
    assert.match(lines.join('\n'), /on v1\.35\.4 already: nothing to do/);
  });

  it('a failed node step stops the rollout naming node, step and code; the restored node is uncordoned, later nodes untouched', async () => {
    const c = new FakeCluster([['control-plane-0', true], ['worker-0', false], ['worker-1', false]]);
    c.failOn = 'worker-0';
    const err = await applyUpgrade(c.deps(), TO).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof UpgradeApplyError && err.code === 'NODE_STEP_FAILED');
    assert.match(err.message, /node worker-0: step "components" failed \(HASH_MISMATCH\)/);
    assert.deepEqual(err.details, { node: 'worker-0', step: 'components', code: 'HASH_MISMATCH', rolledBack: true });
    assert.equal(c.nodes.get('worker-0')!.unschedulable, false);
    assert.equal(c.nodes.get('worker-1')!.kubeletVersion, FROM);
    assert.ok(!c.calls.includes('agent worker-1 STEP_NODE') && !c.calls.includes('helm'));
  });

  it('a re-run after a stop resumes: the NodeVersion is not rewritten, done nodes are skipped, the rest finish', async () => {
    const c = new FakeCluster([['control-plane-0', true], ['worker-0', false], ['worker-1', false]]);
    c.failOn = 'worker-0';
    await assert.rejects(applyUpgrade(c.deps(), TO), UpgradeApplyError);
    c.failOn = undefined;
    c.calls = [];
    await applyUpgrade(c.deps(), TO);
    assert.ok(!c.calls.some((x) => x.startsWith('record') || x.startsWith('nodeversion')), 'NodeVersion not recorded again');
    assert.deepEqual(nodeSteps(c), ['agent worker-0 STEP_NODE', 'agent worker-1 STEP_NODE']);
    assert.equal(c.record.inProgress, undefined);
  });

  it('a node left cordoned after its step (CLI killed before uncordon) is finished on re-run: the agent reports done, it is uncordoned', async () => {
    const c = new FakeCluster([['control-plane-0', true], ['worker-0', false]]);
    const d = c.deps();
    await d.recordTarget(FROM, TO, LIST);
    Object.assign(c.nodes.get('control-plane-0')!, { kubeletVersion: TO, unschedulable: true });
    c.calls = [];
    await applyUpgrade(c.deps(), TO);
    assert.deepEqual(nodeSteps(c), ['agent control-plane-0 STEP_APPLY', 'agent worker-0 STEP_NODE']);
    assert.equal(c.nodes.get('control-plane-0')!.unschedulable, false);
  });

  it('refuses before any change when a check fails: two minors ahead, a node not Ready, another upgrade in progress', async () => {
    const ahead = new FakeCluster([['control-plane-0', true]]);
    const deps = { ...ahead.deps(), supported: [FROM, TO, 'v1.36.0'] };
    await assert.rejects(applyUpgrade(deps, 'v1.36.0'), (e: unknown) => e instanceof UpgradeApplyError && e.code === 'CHECKS_FAILED' && /skips a minor version/.test(e.message));
    assert.deepEqual(ahead.calls, []);
    const notReady = new FakeCluster([['control-plane-0', true], ['worker-0', false]]);
    notReady.nodes.get('worker-0')!.ready = false;
    await assert.rejects(applyUpgrade(notReady.deps(), TO), /every node Ready: not Ready: worker-0/);
    assert.deepEqual(notReady.calls, []);
    const other = new FakeCluster([['control-plane-0', true]]);
    other.record = { clusterVersion: TO, componentsReference: 'x', inProgress: { from: FROM, to: TO } };
    await assert.rejects(applyUpgrade(other.deps(), 'v1.35.9'), (e: unknown) => e instanceof UpgradeApplyError && e.code === 'OTHER_UPGRADE_IN_PROGRESS');
  });
});
