/**
 * Cordon, drain and uncordon against a REAL kube-apiserver (no kubelet, no controllers): the
 * Eviction API with a PodDisruptionBudget that holds, DaemonSet and static pods left alone, and the
 * test playing the kubelet's part of a graceful deletion.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { startTestControlPlane, testenvUnavailable, type TestControlPlane } from '@asterism/k8s-testenv';
import { drainNode, DrainError, setUnschedulable } from './node-drain.js';

const skip = testenvUnavailable();

describe('node drain on a real kube-apiserver', { skip }, () => {
  let cp: TestControlPlane;
  let policy: k8s.PolicyV1Api;
  const pod = (name: string, node: string, extra: Partial<k8s.V1ObjectMeta> = {}): k8s.V1Pod => ({
    metadata: { name, namespace: 'default', labels: { app: name }, ...extra },
    spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }] },
  });

  before(async () => {
    cp = await startTestControlPlane();
    policy = cp.admin.config.makeApiClient(k8s.PolicyV1Api);
    for (const name of ['worker-1', 'worker-2']) await cp.admin.core.createNode({ body: { metadata: { name } } });
    const core = cp.admin.core;
    await core.createNamespacedPod({ namespace: 'default', body: pod('web', 'worker-1') });
    // Running and Ready, as its kubelet would report: a Pending pod may be evicted whatever its budget.
    const web = await core.readNamespacedPod({ namespace: 'default', name: 'web' });
    web.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date() }] };
    await core.replaceNamespacedPodStatus({ namespace: 'default', name: 'web', body: web });
    await core.createNamespacedPod({ namespace: 'default', body: pod('agent', 'worker-1', { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: '00000000-0000-0000-0000-000000000001' }] }) });
    await core.createNamespacedPod({ namespace: 'default', body: pod('static', 'worker-1', { annotations: { 'kubernetes.io/config.mirror': 'hash' } }) });
    await core.createNamespacedPod({ namespace: 'default', body: pod('elsewhere', 'worker-2') });
  });
  after(async () => {
    await cp?.stop();
  });

  it('cordon and uncordon flip spec.unschedulable', async () => {
    await setUnschedulable(cp.admin.core, 'worker-1', true);
    assert.equal((await cp.admin.core.readNode({ name: 'worker-1' })).spec?.unschedulable, true);
    await setUnschedulable(cp.admin.core, 'worker-1', false);
    assert.equal((await cp.admin.core.readNode({ name: 'worker-1' })).spec?.unschedulable ?? false, false);
  });

  it('a disruption budget that forbids the eviction ends in DRAIN_TIMEOUT naming the pod, and nothing is deleted', async () => {
    await policy.createNamespacedPodDisruptionBudget({ namespace: 'default', body: { metadata: { name: 'web' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } } } });
    await assert.rejects(drainNode(cp.admin.core, 'worker-1', { timeoutMs: 2000, pollMs: 200 }), (err: unknown) => err instanceof DrainError && err.code === 'DRAIN_TIMEOUT' && /default\/web/.test(err.message));
    const web = await cp.admin.core.readNamespacedPod({ namespace: 'default', name: 'web' });
    assert.equal(web.metadata?.deletionTimestamp, undefined);
    await policy.deleteNamespacedPodDisruptionBudget({ namespace: 'default', name: 'web' });
  });

  it('evicts the node\'s pods but not DaemonSet, static or other nodes\' pods, and waits until they are gone', async () => {
    // The kubelet's part of a graceful deletion: finish it once the eviction marked the pod.
    let kubelet = true;
    const finishing = (async () => {
      while (kubelet) {
        const pods = (await cp.admin.core.listNamespacedPod({ namespace: 'default' })).items;
        for (const p of pods.filter((x) => x.metadata?.deletionTimestamp)) await cp.admin.core.deleteNamespacedPod({ namespace: 'default', name: p.metadata!.name!, gracePeriodSeconds: 0 }).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const lines: string[] = [];
    try {
      assert.deepEqual(await drainNode(cp.admin.core, 'worker-1', { timeoutMs: 30_000, pollMs: 200, progress: (l) => lines.push(l) }), ['default/web']);
    } finally {
      kubelet = false;
      await finishing;
    }
    assert.deepEqual(lines, ['evicted default/web']);
    const left = (await cp.admin.core.listNamespacedPod({ namespace: 'default' })).items.map((p) => p.metadata!.name).sort();
    assert.deepEqual(left, ['agent', 'elsewhere', 'static']);
  });
});
