/**
 * The verdict -> Kubernetes path against a REAL kube-apiserver (tools/k8s-testenv): the
 * `AttestationVerified` condition through the status subresource, the evidence annotation, the
 * NoExecute taint (kept with other taints), Events, identity bindings -> deny list, readmission.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BINDING_NAMESPACE, ConfigMapIdentityBindings, ConfigMapStore } from '@asterism/k8s';
import { startTestControlPlane, testenvUnavailable, type TestControlPlane } from '@asterism/k8s-testenv';
import { CachedDenyList, DENY_LIST, DenyListStore } from './deny-list.js';
import { CONDITION_TYPE, EVIDENCE_ANNOTATION, NodeStatusWriter, QUARANTINE_TAINT } from './node-status.js';
import { BoundDisks, Quarantine } from './quarantine.js';
import type { Verdict } from './verdict.js';

const skip = testenvUnavailable();
const DISK = 'aaaaaaaa-0000-4000-8000-00000000000a';
const AK = `sha256:${'ab'.repeat(32)}`;

describe('node status, quarantine and deny list on a real kube-apiserver', { skip }, () => {
  let cp: TestControlPlane;
  let status: NodeStatusWriter;
  let deny: DenyListStore;
  let quarantine: Quarantine;
  const verdict = (status: Verdict['status'], at: Date): Verdict => ({
    node: 'worker-1',
    status,
    reason: status === 'Verified' ? 'Verified' : 'MeasurementMismatch',
    ...(status === 'Verified' ? {} : { field: 'PCR[9]' }),
    message: status === 'Verified' ? 'ok' : 'measurement validation failed: PCR[9] expected 11111111… got 22222222…',
    at,
    latencyMs: 3,
    evidence: { variant: 'qemu-vtpm', at: at.toISOString(), registers: 'PCR', values: { '9': '22'.repeat(32) }, akDigest: AK },
  });

  before(async () => {
    cp = await startTestControlPlane();
    const core = cp.admin.core;
    await core.createNode({ body: { metadata: { name: 'worker-1' }, spec: { taints: [{ key: 'example.com/other', value: 'x', effect: 'NoSchedule' }] } } });
    await core.createNode({ body: { metadata: { name: 'cp-1', labels: { 'node-role.kubernetes.io/control-plane': '' } } } });
    await core.createNamespace({ body: { metadata: { name: BINDING_NAMESPACE } } }).catch(() => undefined);
    await new ConfigMapIdentityBindings(new ConfigMapStore(core)).create({ diskUuid: DISK, akDigest: AK, nodeName: 'worker-1', role: 'Worker', createdAt: '2026-11-26T00:00:00Z' });
    status = new NodeStatusWriter(core);
    deny = new DenyListStore(core);
    quarantine = new Quarantine(status, deny, new BoundDisks(core));
  });
  after(async () => cp?.stop());

  it('sets AttestationVerified through the status subresource; the transition time moves only on a status change', async () => {
    const t1 = new Date(Math.floor(Date.now() / 1000) * 1000);
    let node = (await status.get('worker-1'))!;
    await status.setCondition(node, verdict('Verified', t1));
    node = (await status.get('worker-1'))!;
    assert.equal(node.condition?.status, 'True');
    const t2 = new Date(t1.getTime() + 60_000);
    await status.setCondition(node, verdict('Verified', t2));
    node = (await status.get('worker-1'))!;
    assert.equal(new Date(node.condition!.lastTransitionTime!).getTime(), t1.getTime());
    assert.equal(new Date(node.condition!.lastHeartbeatTime!).getTime(), t2.getTime());
    const t3 = new Date(t2.getTime() + 60_000);
    await status.setCondition(node, verdict('Refused', t3));
    node = (await status.get('worker-1'))!;
    assert.deepEqual([node.condition?.status, node.condition?.reason, new Date(node.condition!.lastTransitionTime!).getTime()], ['False', 'MeasurementMismatch', t3.getTime()]);
    assert.match(node.condition!.message!, /^PCR\[9\]: measurement validation failed/);
    const raw = await cp.admin.core.readNode({ name: 'worker-1' });
    assert.equal(raw.status?.conditions?.filter((c) => c.type === CONDITION_TYPE).length, 1);
  });

  it('stores the evidence summary as an annotation the node view parses back', async () => {
    const v = verdict('Refused', new Date());
    await status.setEvidence('worker-1', v.evidence!);
    const node = (await status.get('worker-1'))!;
    assert.deepEqual(node.evidence, v.evidence);
    assert.ok((await cp.admin.core.readNode({ name: 'worker-1' })).metadata?.annotations?.[EVIDENCE_ANNOTATION]);
  });

  it('quarantine deny-lists the bound disk and the AK, adds the NoExecute taint next to other taints, and records a Warning Event', async () => {
    const node = (await status.get('worker-1'))!;
    const entries = await quarantine.quarantine(node, 'MeasurementMismatch', 'PCR[9] differs');
    assert.deepEqual(entries.map((e) => [e.kind, e.id]), [['disk', DISK], ['ak', AK]]);
    const raw = await cp.admin.core.readNode({ name: 'worker-1' });
    // The node lifecycle controller adds its own not-ready taints; ours joins them and keeps the others.
    const taints = (raw.spec?.taints ?? []).filter((t) => !t.key.startsWith('node.kubernetes.io/')).map((t) => [t.key, t.effect]);
    assert.deepEqual(taints, [['example.com/other', 'NoSchedule'], [QUARANTINE_TAINT, 'NoExecute']]);
    assert.equal((await status.get('worker-1'))!.quarantined, true);
    const listed = new CachedDenyList(deny);
    assert.match((await listed.find({ diskUuid: DISK.toUpperCase() }))!.reason, /MeasurementMismatch: PCR\[9\] differs/);
    assert.equal((await listed.find({ akDigest: AK }))!.node, 'worker-1');
    const events = await cp.admin.core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=worker-1' });
    const ev = events.items.find((e) => e.reason === 'AttestationQuarantined');
    assert.ok(ev, 'quarantine Event');
    assert.equal(ev.type, 'Warning');
    assert.match(ev.message!, new RegExp(`deny-listed: disk ${DISK}, ak ${AK}`));
    assert.equal(await status.setQuarantineTaint('worker-1', true, 'again'), false, 'idempotent');
  });

  it('readmission removes the deny-list entries of that node only, the taint only, and records an Event', async () => {
    await deny.add([{ kind: 'disk', id: 'bbbbbbbb-0000-4000-8000-00000000000b', node: 'worker-2', reason: 'r', since: 's' }]);
    const removed = await quarantine.readmit((await status.get('worker-1'))!, 'attestation passed');
    assert.equal(removed, 2);
    assert.deepEqual((await deny.list()).map((e) => e.node), ['worker-2']);
    const raw = await cp.admin.core.readNode({ name: 'worker-1' });
    assert.deepEqual((raw.spec?.taints ?? []).map((t) => t.key).filter((k) => !k.startsWith('node.kubernetes.io/')), ['example.com/other']);
    const events = await cp.admin.core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=worker-1' });
    assert.ok(events.items.some((e) => e.reason === 'AttestationReadmitted'));
  });

  it('concurrent deny-list writers do not lose entries (optimistic concurrency on the ConfigMap)', async () => {
    const writers = Array.from({ length: 6 }, (_, i) => new DenyListStore(cp.admin.core).add([{ kind: 'disk', id: `c${i}`, node: `n${i}`, reason: 'r', since: 's' }]));
    await Promise.all(writers);
    const cm = await cp.admin.core.readNamespacedConfigMap(DENY_LIST);
    for (let i = 0; i < 6; i++) assert.ok(cm.data?.[`disk.c${i}`], `entry ${i}`);
  });
});
