/**
 * Fault scenarios on the real nodes (real-cluster.int.spec.ts, issue "Real nodes, part 2"): a
 * rebooted worker rejoins; a tampered worker is refused and the joinservice pod names the PCR in
 * its log and its metrics; the keyservice is unavailable while a worker joins (the join waits,
 * nothing is half-written, it completes once the keyservice is back); the joinservice of one
 * control plane is unavailable while a worker joins (the other control plane's serves it).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '@asterism/testing';
import { addRealNode, rebootRealNode } from '../faults.js';
import { sampleValue, type RealClusterContext } from './context.js';

const JOIN_METRICS_PORT = 9092;

/** worker-1 rebooted: rejoined with the same disk key and PCR 15, its kubelet restarted its pods. */
export async function rebootedWorkerRejoins(ctx: RealClusterContext): Promise<void> {
  const before = ctx.status('worker-1')!;
  const proxyRestarts = async () => (await ctx.core.listNamespacedPod({ namespace: 'kube-system', fieldSelector: 'spec.nodeName=worker-1', labelSelector: 'k8s-app=kube-proxy' })).items[0]?.status?.containerStatuses?.[0]?.restartCount ?? -1;
  const restartsBefore = await proxyRestarts();
  await rebootRealNode(ctx.root, 'worker-1');
  const after = await eventually('worker-1 rejoined', async () => (ctx.status('worker-1')?.phase === 'rejoined' ? ctx.status('worker-1') : undefined), 90_000);
  ctx.log(`worker-1 rejoined in ${((after.bootstrapMs ?? 0) / 1000).toFixed(1)} s`);
  assert.equal(after.pcr15, before.pcr15);
  assert.ok(ctx.opensDisk('worker-1', ctx.diskKey('worker-1')), 'the KMS-derived key still opens the LUKS header');
  // The node's containers were killed with it: the kubelet that came back restarted them.
  await eventually('kube-proxy on worker-1 restarted by the new kubelet', async () => ((await proxyRestarts()) > restartsBefore ? true : undefined), 90_000);
  await eventually('worker-1 Ready', async () => ((await ctx.ready('worker-1')) ? true : undefined), 60_000);
}

/** worker-bad (PCR 9 tampered) is refused: log line and `joinservice_measurement_mismatches_total{pcr="9"}`. */
export async function tamperedWorkerRefused(ctx: RealClusterContext): Promise<void> {
  await addRealNode(ctx.root, 'worker-bad', { tamper: true });
  const refusal = await eventually('refusal in a joinservice pod log', async () => ctx.kubectl('-n', 'kube-system', 'logs', '-l', 'k8s-app=join-service', '--tail=-1').split('\n').find((l) => l.includes('rejected aTLS peer') && l.includes('MEASUREMENT_MISMATCH') && l.includes('PCR[9]')), 60_000);
  assert.match(refusal, /"code":"ATTESTATION_INVALID"/);
  const metrics = (await ctx.pods('k8s-app=join-service')).map((p) => ctx.podMetrics(p.name, JOIN_METRICS_PORT));
  assert.ok(metrics.some((m) => sampleValue(m, 'joinservice_tickets_refused_total{kind="attestation",reason="MEASUREMENT_MISMATCH",variant="qemu-vtpm"}') > 0));
  // Only PCR 9 was tampered with: the pod's metrics name it and no other register.
  const pcrs = new Set(metrics.flatMap((m) => [...m.matchAll(/^joinservice_measurement_mismatches_total\{variant="qemu-vtpm",pcr="(\d+)"\} [1-9]/gm)].map((x) => x[1])));
  assert.deepEqual([...pcrs], ['9']);
  assert.notEqual(ctx.status('worker-bad')?.phase, 'joined');
  assert.equal((await ctx.core.listNode()).items.some((n) => n.metadata?.name === 'worker-bad'), false);
}

/**
 * The key-service DaemonSet is pointed at no node (its pods go and stay away), worker-late starts:
 * its ticket requests fail with the joinservice logging KEYSERVICE_UNAVAILABLE for the same join
 * id; nothing is written on the worker (not joined, the initial key still opens its disk and the
 * cluster's does not, no kubelet files, no Node). With the keyservice back it joins and is Ready.
 */
export async function keyserviceOutageDuringJoin(ctx: RealClusterContext): Promise<void> {
  const node = 'worker-late';
  ctx.kubectl('-n', 'kube-system', 'patch', 'daemonset', 'key-service', '-p', JSON.stringify({ spec: { template: { spec: { nodeSelector: { 'asterism-test/outage': 'keyservice' } } } } }));
  try {
    await eventually('no key-service pod left', async () => ((await ctx.pods('k8s-app=key-service')).length === 0 ? true : undefined), 60_000);
    await addRealNode(ctx.root, node);
    const failed = await eventually('a failed ticket request of worker-late', async () => ctx.bootstrapperLog(node).find((l) => l.msg === 'join ticket request failed'), 90_000);
    const joinId = String(failed.joinId);
    await eventually(`the joinservice logging join ${joinId} as a keyservice outage`, async () => {
      const lines = ctx.kubectl('-n', 'kube-system', 'logs', '-l', 'k8s-app=join-service', '--tail=-1').split('\n');
      return lines.some((l) => l.includes(joinId) && l.includes('KEYSERVICE_UNAVAILABLE')) ? true : undefined;
    }, 30_000);
    assertNothingWritten(ctx, node);
    ctx.log(`${node}: waiting, ticket refused for join ${joinId} (KEYSERVICE_UNAVAILABLE), nothing written`);
  } finally {
    ctx.kubectl('-n', 'kube-system', 'patch', 'daemonset', 'key-service', '--type=json', '-p', JSON.stringify([{ op: 'remove', path: '/spec/template/spec/nodeSelector/asterism-test~1outage' }]));
  }
  await ctx.waitJoinedAndReady(node);
  assert.ok(ctx.opensDisk(node, ctx.diskKey(node)), 'the cluster key opens the disk after the join');
  assert.equal(ctx.opensDisk(node, ctx.initialDiskKey(node)), false, 'the initial key was replaced');
  ctx.rolledOut('key-service');
}

function assertNothingWritten(ctx: RealClusterContext, node: string): void {
  assert.notEqual(ctx.status(node)?.phase, 'joined');
  assert.ok(ctx.opensDisk(node, ctx.initialDiskKey(node)), 'the initial key still opens the disk');
  assert.equal(ctx.opensDisk(node, ctx.diskKey(node)), false, 'the cluster key was not written');
  const written = [
    join(ctx.layout.nodeDir(node), 'overlay/upper/etc/kubernetes/kubelet.conf'),
    join(ctx.layout.nodeDir(node), 'overlay/upper/var/lib/kubelet/config.yaml'),
    join(ctx.layout.nodeRoot(node), 'run/state/kubelet/pki/kubelet-client-crt.pem'),
    join(ctx.layout.nodeRoot(node), 'run/state/constellation/node_state.json'),
  ].filter((f) => existsSync(f));
  assert.deepEqual(written, [], 'no kubelet or node-state file');
}

/**
 * control-plane-0 loses its joinservice pod (the DaemonSet excludes it), worker-late2 starts: the
 * join Service's `externalTrafficPolicy: Local` makes control-plane-0's NodePort drop the
 * connection, so the worker's probe finds only control-plane-1, whose pod issues the ticket (its
 * tickets-issued counter rises). The DaemonSet is restored afterwards.
 */
export async function joinserviceDownOnOneControlPlane(ctx: RealClusterContext): Promise<void> {
  const node = 'worker-late2';
  const svc = await ctx.core.readNamespacedService({ name: 'join-service', namespace: 'kube-system' });
  assert.equal(svc.spec?.externalTrafficPolicy, 'Local', 'the endpoint a node dials decides which pod serves it');
  const notOnCp0 = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'NotIn', values: ['control-plane-0'] }] }] } } };
  ctx.kubectl('-n', 'kube-system', 'patch', 'daemonset', 'join-service', '-p', JSON.stringify({ spec: { template: { spec: { affinity: notOnCp0 } } } }));
  try {
    ctx.rolledOut('join-service');
    const pods = await eventually('one ready join-service pod, on control-plane-1', async () => {
      const p = await ctx.pods('k8s-app=join-service');
      return p.length === 1 && p[0]!.node === 'control-plane-1' && p[0]!.ready ? p : undefined;
    }, 60_000);
    const issued = () => sampleValue(ctx.podMetrics(pods[0]!.name, JOIN_METRICS_PORT), 'joinservice_tickets_issued_total{kind="join",variant="qemu-vtpm"}');
    const before = issued();
    await addRealNode(ctx.root, node);
    await ctx.waitJoinedAndReady(node);
    assert.equal(issued(), before + 1, 'control-plane-1 issued the ticket');
    assert.deepEqual((await ctx.pods('k8s-app=join-service')).map((p) => p.node), ['control-plane-1'], 'control-plane-0 had no joinservice pod throughout');
    const got = ctx.bootstrapperLog(node).find((l) => l.msg === 'received join ticket');
    assert.equal(got?.endpoint, '10.42.0.11:30090', "the worker got its ticket from control-plane-1's endpoint");
  } finally {
    ctx.kubectl('-n', 'kube-system', 'patch', 'daemonset', 'join-service', '-p', JSON.stringify({ spec: { template: { spec: { affinity: null } } } }));
  }
  ctx.rolledOut('join-service');
  assert.deepEqual((await ctx.pods('k8s-app=join-service')).map((p) => p.node).sort(), ['control-plane-0', 'control-plane-1']);
}

