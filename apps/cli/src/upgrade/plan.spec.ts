import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planReady, planUpgrade, renderPlan, type ClusterFacts } from './plan.js';

const SUPPORTED = ['v1.34.4', 'v1.35.4', 'v1.36.1'];
const NOW = new Date('2026-11-26T12:00:00Z');

function healthy(): ClusterFacts {
  return {
    clusterVersion: 'v1.34.4',
    nodes: [
      { name: 'worker-b', controlPlane: false, ready: true, kubeletVersion: 'v1.34.4' },
      { name: 'cp-2', controlPlane: true, ready: true, kubeletVersion: 'v1.34.4' },
      { name: 'cp-1', controlPlane: true, ready: true, kubeletVersion: 'v1.34.4' },
      { name: 'worker-a', controlPlane: false, ready: true, kubeletVersion: 'v1.34.4' },
    ],
    etcd: [
      { node: 'cp-1', ready: true },
      { node: 'cp-2', ready: true },
    ],
    // The joinservice's objects stay after a join: a Node of that name, or a past deadline, is not mid-join.
    joining: [
      { name: 'worker-a', deadline: '2026-11-27T00:00:00Z' },
      { name: 'worker-gone', deadline: '2026-11-26T11:00:00Z' },
    ],
  };
}
const failed = (facts: ClusterFacts, wanted = '') => planUpgrade(facts, SUPPORTED, wanted, NOW).checks.filter((c) => !c.ok).map((c) => c.name);

describe('upgrade plan', () => {
  it('a healthy cluster: one-step targets, the newest as default, control planes first, every check passes', () => {
    const plan = planUpgrade(healthy(), SUPPORTED, '', NOW);
    assert.deepEqual(plan.targets, ['v1.35.4']);
    assert.equal(plan.target, 'v1.35.4');
    assert.deepEqual(
      plan.steps.map((s) => [s.order, s.name, s.action]),
      [
        [1, 'cp-1', 'kubeadm upgrade apply v1.35.4'],
        [2, 'cp-2', 'kubeadm upgrade node'],
        [3, 'worker-a', 'kubeadm upgrade node'],
        [4, 'worker-b', 'kubeadm upgrade node'],
      ],
    );
    assert.ok(planReady(plan), JSON.stringify(plan.checks));
    const text = renderPlan(plan);
    assert.match(text, /cp-1 +control plane +kubeadm upgrade apply v1\.35\.4 +v1\.34\.4 -> v1\.35\.4/);
    assert.match(text, /Ready to upgrade\./);
  });

  it('two minors ahead fails the skew check, naming the next minor', () => {
    const plan = planUpgrade(healthy(), SUPPORTED, 'v1.36.1', NOW);
    assert.deepEqual(failed(healthy(), 'v1.36.1'), ['version skew']);
    assert.match(renderPlan(plan), /\[FAIL\] version skew: v1\.34\.4 -> v1\.36\.1 skips a minor version.*next: v1\.35\.x/);
  });

  it('a NotReady node, a kubelet off the cluster version, a missing etcd member and a node mid-join each fail their own check', () => {
    const notReady = healthy();
    notReady.nodes[0]!.ready = false;
    assert.deepEqual(failed(notReady), ['every node Ready']);
    const skewed = healthy();
    skewed.nodes[1]!.kubeletVersion = 'v1.35.4';
    assert.deepEqual(failed(skewed), ['every node on the cluster version']);
    const etcdDown = healthy();
    etcdDown.etcd[1]!.ready = false;
    assert.deepEqual(failed(etcdDown), ['etcd healthy']);
    const joining = healthy();
    joining.joining.push({ name: 'worker-c', deadline: '2026-11-28T00:00:00Z' });
    assert.deepEqual(failed(joining), ['no node mid-join']);
    assert.match(renderPlan(planUpgrade(joining, SUPPORTED, '', NOW)), /joining: worker-c \(until 2026-11-28T00:00:00Z\)/);
  });

  it('the newest supported version has nothing to move to, and says so', () => {
    const newest = healthy();
    newest.clusterVersion = 'v1.36.1';
    for (const n of newest.nodes) n.kubeletVersion = 'v1.36.1';
    const plan = planUpgrade(newest, SUPPORTED, '', NOW);
    assert.deepEqual(plan.targets, []);
    assert.equal(plan.target, undefined);
    assert.deepEqual(failed(newest), ['version skew']);
    assert.match(renderPlan(plan), /May move to: +nothing/);
  });
});
