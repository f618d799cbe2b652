/**
 * `asterism upgrade plan` against a REAL kube-apiserver: the NodeVersion init writes, Nodes with
 * the status a kubelet reports, etcd static pods, and JoiningNode objects as the joinservice writes them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { JOINING_NODE_CRD, JoiningNodeWriter, NODE_VERSION_CRD, NODE_VERSION_NAME, UPDATE_GROUP, UPDATE_VERSION } from '@asterism/k8s';
import { startTestControlPlane, testenvUnavailable, type TestControlPlane } from '@asterism/k8s-testenv';
import { supportedKubernetesVersions } from '@asterism/versions';
import { upgradeCommand } from './upgrade-cli.js';

const skip = testenvUnavailable();
const [OLDER, NEWER] = supportedKubernetesVersions();

describe('asterism upgrade plan on a real kube-apiserver', { skip }, () => {
  let cp: TestControlPlane;
  const run = async (argv: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await upgradeCommand([...argv, `--kubeconfig=${cp.adminKubeconfigPath}`], { stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s) });
    return { code, stdout, stderr };
  };

  before(async () => {
    assert.ok(OLDER && NEWER, 'the manifest has two versions');
    cp = await startTestControlPlane();
    const ext = cp.admin.config.makeApiClient(k8s.ApiextensionsV1Api);
    for (const crd of [NODE_VERSION_CRD, JOINING_NODE_CRD]) await ext.createCustomResourceDefinition({ body: crd });
    await waitForCrds(cp);
    await cp.admin.custom.createClusterCustomObject({
      group: UPDATE_GROUP,
      version: UPDATE_VERSION,
      plural: 'nodeversions',
      body: { apiVersion: `${UPDATE_GROUP}/${UPDATE_VERSION}`, kind: 'NodeVersion', metadata: { name: NODE_VERSION_NAME }, spec: { kubernetesComponentsReference: 'k8s-components-test', kubernetesClusterVersion: OLDER } },
    });
    await cp.admin.core.createNamespace({ body: { metadata: { name: 'kube-system' } } }).catch(() => undefined);
    for (const [name, controlPlane] of [['cp-1', true], ['worker-1', false], ['worker-2', false]] as const) {
      await addNode(cp.admin.core, name, controlPlane, OLDER!);
    }
    await addEtcdPod(cp.admin.core, 'cp-1');
    // A joined worker's object stays (the joinservice never deletes it): not mid-join.
    await new JoiningNodeWriter(cp.admin.custom).add({ nodeName: 'worker-1', componentsReference: 'k8s-components-test', isControlPlane: false });
  });
  after(async () => {
    await cp?.stop();
  });

  it('a healthy 1 + 2 cluster: plan to the next version, control plane first, exit 0', async () => {
    const r = await run(['plan']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`Cluster version: ${OLDER!.replace(/\./g, '\\.')}`));
    assert.match(r.stdout, new RegExp(`1 +cp-1 +control plane +kubeadm upgrade apply ${NEWER!.replace(/\./g, '\\.')}`));
    assert.match(r.stdout, /3 +worker-2 +worker +kubeadm upgrade node/);
    assert.match(r.stdout, /\[ok\] no node mid-join: none/);
  });

  it('--json carries the same plan', async () => {
    const r = await run(['plan', '--json']);
    const plan = JSON.parse(r.stdout) as { current: string; target: string; steps: { name: string }[]; checks: { ok: boolean }[] };
    assert.equal(plan.current, OLDER);
    assert.equal(plan.target, NEWER);
    assert.deepEqual(plan.steps.map((s) => s.name), ['cp-1', 'worker-1', 'worker-2']);
    assert.ok(plan.checks.every((c) => c.ok));
  });

  it('a node that holds a ticket and is not a Node yet blocks the plan (exit 1, named)', async () => {
    await new JoiningNodeWriter(cp.admin.custom).add({ nodeName: 'worker-3', componentsReference: 'k8s-components-test', isControlPlane: false });
    const r = await run(['plan']);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, /\[FAIL\] no node mid-join: joining: worker-3/);
    await cp.admin.custom.deleteClusterCustomObject({ group: UPDATE_GROUP, version: UPDATE_VERSION, plural: 'joiningnodes', name: 'worker-3' });
  });

  it('a NotReady worker and an unsupported target each fail by name', async () => {
    await setReady(cp.admin.core, 'worker-2', false);
    const r = await run(['plan', '--kubernetes-version', 'v1.99.0']);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /\[FAIL\] every node Ready: not Ready: worker-2/);
    assert.match(r.stdout, /\[FAIL\] version skew: v1\.99\.0 is not a supported Kubernetes version/);
    await setReady(cp.admin.core, 'worker-2', true);
  });

  it('a usage mistake is a usage error, not a plan', async () => {
    await assert.rejects(run(['rollback']), /unknown upgrade action "rollback" \(want: plan or apply\)/);
    await assert.rejects(run(['apply']), /apply needs --kubernetes-version <v>/);
  });
});

async function waitForCrds(cp: TestControlPlane): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      await cp.admin.custom.listClusterCustomObject({ group: UPDATE_GROUP, version: UPDATE_VERSION, plural: 'nodeversions' });
      await cp.admin.custom.listClusterCustomObject({ group: UPDATE_GROUP, version: UPDATE_VERSION, plural: 'joiningnodes' });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error('CRDs not served within 10 s');
}

/** A Node with the status a kubelet of `version` reports. */
async function addNode(core: k8s.CoreV1Api, name: string, controlPlane: boolean, version: string): Promise<void> {
  await core.createNode({ body: { metadata: { name, labels: controlPlane ? { 'node-role.kubernetes.io/control-plane': '' } : {} } } });
  await setReady(core, name, true, version);
}

async function setReady(core: k8s.CoreV1Api, name: string, ready: boolean, version?: string): Promise<void> {
  const node = await core.readNode({ name });
  node.status = {
    ...node.status,
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', reason: ready ? 'KubeletReady' : 'KubeletNotReady', lastHeartbeatTime: new Date(), lastTransitionTime: new Date() }],
    ...(version ? { nodeInfo: { kubeletVersion: version, architecture: 'amd64', bootID: '', containerRuntimeVersion: 'containerd://1.6.20', kernelVersion: '6.1.0', kubeProxyVersion: version, machineID: '', operatingSystem: 'linux', osImage: 'Asterism', systemUUID: '' } } : {}),
  };
  await core.replaceNodeStatus({ name, body: node });
}

/** etcd's static pod on `node`, Ready as its kubelet would report it. */
async function addEtcdPod(core: k8s.CoreV1Api, node: string): Promise<void> {
  const name = `etcd-${node}`;
  await core.createNamespacedPod({ namespace: 'kube-system', body: { metadata: { name, labels: { component: 'etcd', tier: 'control-plane' } }, spec: { nodeName: node, containers: [{ name: 'etcd', image: 'etcd' }] } } });
  const pod = await core.readNamespacedPod({ namespace: 'kube-system', name });
  pod.status = { ...pod.status, phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date() }] };
  await core.replaceNamespacedPodStatus({ namespace: 'kube-system', name, body: pod });
}
