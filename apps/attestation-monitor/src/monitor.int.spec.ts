/**
 * The monitor end to end on REAL components: a real kube-apiserver (tools/k8s-testenv) holding
 * Nodes, join-config, identity bindings and the deny list; three nodes attesting as qemu-vtpm on
 * their own swtpm vTPMs through real verify.API servers, marked with the cluster ID in PCR 15.
 * Covers: all Verified; PCR 9 extended -> quarantined (taint, deny list, Event, metrics); a stopped
 * verification service -> unverified only after the grace period; the last healthy control plane
 * withheld; warn mode records and counts without quarantining.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { QemuVtpmIssuer, Variant } from '@asterism/attestation';
import { ConfigMapIdentityBindings, ConfigMapStore } from '@asterism/k8s';
import { startTestControlPlane, testenvUnavailable, type TestControlPlane } from '@asterism/k8s-testenv';
import { createNopLogger } from '@asterism/logger';
import { AttestationMonitor, BoundDisks, CachedDenyList, DenyListStore, GrpcAttestationSource, MonitorMetrics, NodeChecker, NodeStatusWriter, Quarantine, QUARANTINE_TAINT, runningNodeValidator } from '@asterism/node-attestation';
import { ServiceMetrics } from '@asterism/service-runtime';
import { missingComponent } from '@asterism/testing';
import { range, TPM_ALG } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import { startVerifyServer, type VerifyServerFixture } from '@asterism/node-attestation/testing';
import { JoinConfigInputs } from './inputs.js';

const skip = testenvUnavailable() || (swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT));
const MIN_EVENT_LOG = Buffer.from(
  '000000000300000000000000000000000000000000000000000000002500000053706563204944204576656e74303300000000000002000202000000040014000b00200000',
  'hex',
);
const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest();
const DISK_W1 = 'aaaaaaaa-0000-4000-8000-00000000000a';
const GRACE_MS = 1500;

interface TestNode {
  name: string;
  tpm: Swtpm;
  server: VerifyServerFixture;
}

describe('attestation monitor against a real kube-apiserver and swtpm-backed nodes', { skip }, () => {
  let cp: TestControlPlane;
  const nodes = new Map<string, TestNode>();
  const clusterId = randomBytes(32);
  let monitor: AttestationMonitor;
  let service: ServiceMetrics;
  const condition = async (name: string) => (await cp.admin.core.readNode({ name })).status?.conditions?.find((c) => c.type === 'AttestationVerified');
  const taints = async (name: string) => ((await cp.admin.core.readNode({ name })).spec?.taints ?? []).filter((t) => t.key === QUARANTINE_TAINT);
  const events = async (name: string) => (await cp.admin.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${name}` })).items.map((e) => e.reason);
  const metric = async (text: RegExp) => text.exec(await service.registry.metrics())?.[1];
  const setMode = (mode: string) =>
    cp.admin.core.patchNamespacedConfigMap({ namespace: 'kube-system', name: 'join-config', body: { data: { attestationMode: mode } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));

  async function addNode(name: string, controlPlane: boolean): Promise<TestNode> {
    const tpm = await startSwtpm();
    const c = await tpm.client();
    await c.pcrExtend(4, [{ hashAlg: TPM_ALG.SHA256, digest: sha256('kernel') }]);
    await c.pcrExtend(15, [{ hashAlg: TPM_ALG.SHA256, digest: sha256(clusterId) }]);
    const server = await startVerifyServer(new QemuVtpmIssuer(() => tpm.client(), async () => MIN_EVENT_LOG));
    await cp.admin.core.createNode({ body: { metadata: { name, labels: controlPlane ? { 'node-role.kubernetes.io/control-plane': '' } : {} } } });
    const n = { name, tpm, server };
    nodes.set(name, n);
    return n;
  }

  before(async () => {
    cp = await startTestControlPlane();
    const core = cp.admin.core;
    await core.createNamespace({ body: { metadata: { name: 'kube-system' } } }).catch(() => undefined);
    await addNode('cp-1', true);
    await addNode('worker-1', false);
    await addNode('worker-2', false);
    // The cluster's attestation config: every PCR as the nodes booted (PCR 15 zero, as for joining nodes).
    const fresh = await startSwtpm();
    const fc = await fresh.client();
    await fc.pcrExtend(4, [{ hashAlg: TPM_ALG.SHA256, digest: sha256('kernel') }]);
    const measurements: Record<string, { expected: string; warnOnly: boolean }> = {};
    for (const [i, v] of await fc.pcrRead(range(24))) measurements[String(i)] = { expected: Buffer.from(v).toString('hex'), warnOnly: false };
    await fresh.stop();
    await core.createNamespacedConfigMap({ namespace: 'kube-system', body: { metadata: { name: 'join-config' }, data: { attestationConfig: JSON.stringify({ measurements }) }, binaryData: { measurementSalt: randomBytes(32).toString('base64') } } });
    await new ConfigMapIdentityBindings(new ConfigMapStore(core)).create({ diskUuid: DISK_W1, akDigest: 'sha256:x', nodeName: 'worker-1', role: 'Worker', createdAt: '2026-11-26T00:00:00Z' });
    service = new ServiceMetrics('attestation_monitor', { defaultMetrics: false });
    const status = new NodeStatusWriter(core);
    const logger = createNopLogger();
    monitor = new AttestationMonitor({
      inputs: new JoinConfigInputs(core, 'kube-system'),
      nodes: status,
      quarantine: new Quarantine(status, new DenyListStore(core), new BoundDisks(core)),
      checker: new NodeChecker({ source: new GrpcAttestationSource(), clusterId, timeoutMs: 5000 }),
      buildValidator: runningNodeValidator(Variant.fromString('qemu-vtpm'), logger),
      endpointOf: (n) => nodes.get(n.name)?.server.endpoint,
      metrics: new MonitorMetrics(service.registry),
      logger,
      graceMs: GRACE_MS,
      concurrency: 4,
    });
  });
  after(async () => {
    for (const n of nodes.values()) {
      await n.server.stop();
      await n.tpm.stop();
    }
    await cp?.stop();
  });

  it('round 1: every node is AttestationVerified=True with an Event and its evidence stored', async () => {
    const outcomes = await monitor.round();
    assert.deepEqual(outcomes.map((o) => [o.verdict.node, o.verdict.status]).sort(), [['cp-1', 'Verified'], ['worker-1', 'Verified'], ['worker-2', 'Verified']]);
    for (const name of nodes.keys()) {
      assert.equal((await condition(name))?.status, 'True', name);
      assert.ok((await events(name)).includes('AttestationVerified'));
    }
    assert.equal(await metric(/attestation_monitor_node_verified\{node="worker-1"\} (\d)/), '1');
  });

  it('PCR 9 extended on worker-1 (a changed boot): Refused, quarantined in the next round (taint, deny list, Event, metrics)', async () => {
    const c = await nodes.get('worker-1')!.tpm.client();
    await c.pcrExtend(9, [{ hashAlg: TPM_ALG.SHA256, digest: sha256('tampered') }]);
    const outcomes = await monitor.round();
    const w1 = outcomes.find((o) => o.verdict.node === 'worker-1')!;
    assert.deepEqual([w1.verdict.reason, w1.verdict.field, w1.decision.quarantine], ['MeasurementMismatch', 'PCR[9]', 'yes']);
    const cond = await condition('worker-1');
    assert.deepEqual([cond?.status, cond?.reason], ['False', 'MeasurementMismatch']);
    assert.match(cond!.message!, /^PCR\[9\]:/);
    assert.equal((await taints('worker-1'))[0]?.effect, 'NoExecute');
    const denied = await new CachedDenyList(new DenyListStore(cp.admin.core)).find({ diskUuid: DISK_W1 });
    assert.match(denied!.reason, /^MeasurementMismatch: PCR\[9\]: measurement validation failed/);
    assert.ok((await new DenyListStore(cp.admin.core).list()).some((e) => e.kind === 'ak' && e.node === 'worker-1'), 'the AK digest from the evidence is deny-listed too');
    assert.ok((await events('worker-1')).includes('AttestationQuarantined'));
    assert.ok((await events('worker-1')).includes('AttestationFailed'));
    assert.equal(await metric(/attestation_monitor_quarantines_total\{outcome="yes"\} (\d+)/), '1');
    assert.equal(await metric(/attestation_monitor_verdicts_total\{status="Refused",reason="MeasurementMismatch"\} (\d+)/), '1');
    const again = await monitor.round();
    assert.equal(again.find((o) => o.verdict.node === 'worker-1')!.decision.quarantine, 'already');
  });

  it('a stopped verification service: worker-2 keeps its condition within the grace period, is unverified and quarantined after it', async () => {
    const w2 = nodes.get('worker-2')!;
    await w2.server.stop();
    const before = await monitor.round();
    assert.deepEqual(before.find((o) => o.verdict.node === 'worker-2')!.decision, { record: false, quarantine: 'no' });
    assert.equal((await condition('worker-2'))?.status, 'True', 'not before the grace period');
    assert.equal((await taints('worker-2')).length, 0);
    await new Promise((r) => setTimeout(r, GRACE_MS + 100));
    await monitor.round();
    const cond = await condition('worker-2');
    assert.deepEqual([cond?.status, cond?.reason], ['False', 'Unreachable']);
    assert.equal((await taints('worker-2')).length, 1);
  });

  it('the last healthy control plane failing is recorded but not quarantined (Event says so)', async () => {
    const c = await nodes.get('cp-1')!.tpm.client();
    await c.pcrExtend(9, [{ hashAlg: TPM_ALG.SHA256, digest: sha256('tampered cp') }]);
    const outcomes = await monitor.round();
    assert.equal(outcomes.find((o) => o.verdict.node === 'cp-1')!.decision.quarantine, 'withheld');
    assert.equal((await condition('cp-1'))?.status, 'False');
    assert.equal((await taints('cp-1')).length, 0);
    assert.ok((await events('cp-1')).includes('AttestationQuarantineWithheld'));
  });

  it('warn mode (join-config attestationMode=warn): a failing node is recorded and counted, never quarantined', async () => {
    await setMode('warn');
    const w3 = await addNode('worker-3', false);
    const first = await monitor.round();
    assert.equal((await condition('worker-3'))?.status, 'True');
    const c = await w3.tpm.client();
    await c.pcrExtend(9, [{ hashAlg: TPM_ALG.SHA256, digest: sha256('tampered w3') }]);
    const outcomes = await monitor.round();
    assert.equal(outcomes.find((o) => o.verdict.node === 'worker-3')!.decision.quarantine, 'warn-only');
    assert.equal((await condition('worker-3'))?.status, 'False');
    assert.equal((await taints('worker-3')).length, 0);
    assert.ok((await events('worker-3')).includes('AttestationWouldQuarantine'));
    // cp-1 (still failing) is warn-only in both rounds too: the counter counts every warn-only decision.
    const warned = [...first, ...outcomes].filter((o) => o.decision.quarantine === 'warn-only').map((o) => o.verdict.node).sort();
    assert.deepEqual(warned, ['cp-1', 'cp-1', 'worker-3']);
    assert.equal(await metric(/attestation_monitor_quarantines_total\{outcome="warn-only"\} (\d+)/), '3');
    assert.equal((await new DenyListStore(cp.admin.core).list()).filter((e) => e.node === 'worker-3').length, 0);
  });
});
