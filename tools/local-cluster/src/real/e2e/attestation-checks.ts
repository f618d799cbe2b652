/**
 * Continuous attestation on the real nodes (issue 33, docs/protocol/continuous-attestation.md,
 * docs/adr/0037-continuous-attestation.md), run by real-cluster.int.spec.ts after the fault
 * scenarios:
 * - the deny list itself refuses a rejoin: a healthy worker quarantined by `asterism node
 *   quarantine` reboots and its rejoin is refused PERMISSION_DENIED / QUARANTINED (no data key is
 *   derived for it); `asterism node readmit` passes (it attests fine) and the next rejoin succeeds;
 * - a worker's verification-service pod really stopped (the DaemonSet no longer places it there):
 *   the node stays verified through the grace period and is quarantined after it, not before;
 * - the control planes fail one after the other (PCR 9 extended): the first is quarantined, the last
 *   healthy one is withheld (condition False, no taint, Event and metric), and the CLI refuses to
 *   quarantine it without --force.
 */
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { VERIFY_USER_DATA } from '@asterism/node-attestation';
import { verify } from '@asterism/proto';
import { eventually } from '@asterism/testing';
import { powerOffRealNode, rebootRealNode, restartRealNode } from '../faults.js';
import { extendNodePcr, perDocumentVtpmIssuer } from '../vtpm-access.js';
import type { RealClusterContext } from './context.js';
import { attestationState, denyEntries, monitorEvents, monitorLog, monitorSample, runCli, setMonitorTiming, verifiedSince } from './attestation-support.js';

const JOIN_METRICS_PORT = 9092;
/** The interval and grace period the last two scenarios run with (the suite's cluster starts with 20 s / 300 s). */
export const SHORT_TIMING = { intervalS: 5, graceS: 30 } as const;

const secondsSince = (t: number) => ((Date.now() - t) / 1000).toFixed(1);

/** Lines of the node's bootstrapper log after the first `from`. */
function logSince(ctx: RealClusterContext, node: string, from: number) {
  return ctx.bootstrapperLog(node).slice(from);
}

/**
 * worker-0, healthy, is quarantined by the operator; rebooted, its rejoin is refused by the
 * deny list (PERMISSION_DENIED, QUARANTINED) and the keyservice derives no key for those joins.
 * Powered off, its vTPM answers `asterism node readmit` through a verify.API server on the host
 * (the node's own pod runs only once its kubelet does, after a join); PCR 15 is not marked yet, so
 * readmit accepts it on its measurements and its own attestation key. Its services started again,
 * it rejoins.
 */
export async function denyListRefusesQuarantinedWorker(ctx: RealClusterContext): Promise<void> {
  const node = 'worker-0';
  assert.equal((await attestationState(ctx, node)).condition?.status, 'True', `${node} is healthy before the operator quarantines it`);
  const q = await runCli(ctx, ['node', 'quarantine', node, '--reason', 'e2e: deny list on real nodes']);
  assert.equal(q.status, 0, q.stderr);
  assert.equal((await attestationState(ctx, node)).tainted, true, 'quarantine taints the node');
  const entries = (await denyEntries(ctx)).filter((e) => e.node === node);
  assert.ok(entries.length > 0, 'the node is on the deny list');
  ctx.log(`${node}: quarantined by the operator; deny list: ${entries.map((e) => `${e.kind}.${e.id.slice(0, 20)}`).join(', ')}`);

  const from = ctx.bootstrapperLog(node).length;
  const rebootedAt = Date.now();
  await rebootRealNode(ctx.root, node);
  const refusals = await eventually(`${node}: two refused rejoin attempts`, async () => {
    const r = logSince(ctx, node, from).filter((l) => l.msg === 'rejoin ticket request failed');
    return r.length >= 2 ? r : undefined;
  }, 120_000);
  ctx.log(`${node}: rejoin refused ${secondsSince(rebootedAt)} s after the reboot: ${JSON.stringify(refusals[0]!.err).slice(0, 300)}`);
  for (const r of refusals) assert.match(JSON.stringify(r.err), /PERMISSION_DENIED.*is quarantined \(node worker-0\)/, 'the deny list refused it, not the measurement check');
  assert.equal(logSince(ctx, node, from).some((l) => l.msg === 'rejoined'), false);
  const joinIds = refusals.map((r) => String(r.joinId));
  const joinLog = ctx.kubectl('-n', 'kube-system', 'logs', '-l', 'k8s-app=join-service', '--tail=-1').split('\n');
  assert.ok(joinIds.some((id) => joinLog.some((l) => l.includes(id) && l.includes('QUARANTINED'))), 'a joinservice pod logs QUARANTINED for the refused join ids');
  const keyLog = ctx.kubectl('-n', 'kube-system', 'logs', '-l', 'k8s-app=key-service', '--tail=-1').split('\n');
  assert.deepEqual(keyLog.filter((l) => joinIds.some((id) => l.includes(id))), [], 'no data key derived for a refused join');
  const refused = (await ctx.pods('k8s-app=join-service')).map((p) => ctx.podMetrics(p.name, JOIN_METRICS_PORT));
  assert.ok(refused.some((m) => /^joinservice_tickets_refused_total\{kind="rejoin",reason="QUARANTINED"[^}]*\} [1-9]/m.test(m)), 'counted as a QUARANTINED rejoin refusal');

  await readmitPoweredOffNode(ctx, node);
  assert.deepEqual((await denyEntries(ctx)).filter((e) => e.node === node), [], 'readmit removed its deny-list entries');
  const from2 = ctx.bootstrapperLog(node).length;
  const bootAt = Date.now();
  // Its services start again on the boot the readmit attested (a second reboot would be the
  // vTPM's third non-orderly start-up in this suite's life of the node: dictionary-attack lockout).
  await restartRealNode(ctx.root, node);
  await eventually(`${node} rejoined after readmit`, async () => (logSince(ctx, node, from2).some((l) => l.msg === 'rejoined') ? true : undefined), 120_000);
  await eventually(`${node} Ready`, async () => ((await ctx.ready(node)) ? true : undefined), 90_000);
  assert.equal((await attestationState(ctx, node)).tainted, false);
  ctx.log(`${node}: readmitted, rejoined and Ready ${secondsSince(bootAt)} s after its boot`);
}

/** Powers the node off (its bootstrapper releases the vTPM) and readmits it with its vTPM served on the host. */
export async function readmitPoweredOffNode(ctx: RealClusterContext, node: string): Promise<void> {
  await powerOffRealNode(ctx.root, node);
  const server = await serveNodeAttestation(ctx, node);
  try {
    const r = await runCli(ctx, ['node', 'readmit', node, `--endpoint=127.0.0.1:${server.port}`]);
    assert.equal(r.status, 0, `readmit: ${r.stdout}${r.stderr}`);
    assert.match(r.stdout, new RegExp(`${node} passed attestation \\(not marked yet: booted, awaiting its rejoin\\) and is readmitted`));
    ctx.log(`${node}: ${r.stdout.trim()}`);
  } finally {
    server.close();
  }
}

/**
 * verify.API/GetAttestation on an ephemeral loopback port, answered by the node's vTPM over the
 * verification service's user data (docs/protocol/verification.md): what the node's pod would
 * serve. (The verification-service app itself cannot be a dependency here: it depends on this tool.)
 */
async function serveNodeAttestation(ctx: RealClusterContext, node: string): Promise<{ port: number; close(): void }> {
  const issuer = perDocumentVtpmIssuer(ctx.root, node);
  const server = new grpc.Server();
  server.addService(verify.APIService, {
    getAttestation: (call: grpc.ServerUnaryCall<verify.GetAttestationRequest, verify.GetAttestationResponse>, done: grpc.sendUnaryData<verify.GetAttestationResponse>) => {
      issuer.issue(VERIFY_USER_DATA, Buffer.from(call.request.nonce)).then(
        (attestation) => done(null, { attestation: Buffer.from(attestation) }),
        (err: unknown) => done({ code: grpc.status.INTERNAL, details: (err as Error).message }),
      );
    },
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  return { port, close: () => server.forceShutdown() };
}

/**
 * With a short interval and grace period, worker-1's verification-service pod is taken off the node
 * (a DaemonSet node affinity): the node stays AttestationVerified=True and untainted until the grace
 * period has passed, then is quarantined as Unreachable. The pod is put back and the node readmitted.
 */
export async function stoppedVerificationServiceGrace(ctx: RealClusterContext, nodes: string[]): Promise<void> {
  const node = 'worker-1';
  const { intervalS, graceS } = SHORT_TIMING;
  setMonitorTiming(ctx, intervalS, graceS);
  // After the rollout: the old monitor pod is gone, so these checks are the new one's.
  const rolledOutAt = Date.now();
  await verifiedSince(ctx, nodes, rolledOutAt, 120_000);
  ctx.log(`monitor at --interval=${intervalS} --grace=${graceS}: every node verified ${secondsSince(rolledOutAt)} s after the rollout`);

  const notHere = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'NotIn', values: [node] }] }] } } };
  ctx.kubectl('-n', 'kube-system', 'patch', 'daemonset', 'verification-service', '-p', JSON.stringify({ spec: { template: { spec: { affinity: notHere } } } }));
  try {
    await eventually(`no verification-service pod on ${node}`, async () => ((await ctx.pods('k8s-app=verification-service')).some((p) => p.node === node) ? undefined : true), 90_000);
    const stoppedAt = Date.now();
    const samples: Array<{ at: number; status: string; tainted: boolean }> = [];
    const quarantinedAt = await eventually(`${node} quarantined as Unreachable`, async () => {
      const s = await attestationState(ctx, node);
      samples.push({ at: Date.now(), status: s.condition?.status ?? '-', tainted: s.tainted });
      await new Promise((r) => setTimeout(r, 750));
      return s.tainted && s.condition?.status === 'False' && s.condition.reason === 'Unreachable' ? Date.now() : undefined;
    }, (graceS + 4 * intervalS + 60) * 1000);
    const firstUnreachable = monitorLog(ctx).find((l) => l.node === node && l.msg === 'node failed attestation' && Date.parse(String(l.time)) >= stoppedAt - 1000);
    const firstAt = firstUnreachable ? Date.parse(String(firstUnreachable.time)) : stoppedAt;
    const beforeGrace = samples.filter((s) => s.at < stoppedAt + graceS * 1000);
    ctx.log(`${node}: verification pod gone; first Unreachable check +${((firstAt - stoppedAt) / 1000).toFixed(1)} s, quarantined +${((quarantinedAt - stoppedAt) / 1000).toFixed(1)} s (grace ${graceS} s, interval ${intervalS} s); ${beforeGrace.length} samples within the grace period all True: ${beforeGrace.every((s) => s.status === 'True' && !s.tainted)}`);
    assert.ok(beforeGrace.length >= 10, 'the node was watched through the grace period');
    assert.ok(beforeGrace.every((s) => s.status === 'True' && !s.tainted), `verified and untainted within the grace period: ${JSON.stringify(beforeGrace.filter((s) => s.status !== 'True' || s.tainted))}`);
    assert.ok(quarantinedAt - firstAt >= graceS * 1000, 'quarantined only once the grace period had passed since the first unreachable check');
    await eventually(`an AttestationQuarantined Event naming Unreachable for ${node}`, async () => ((await monitorEvents(ctx, node, 'AttestationQuarantined')).some((e) => /Unreachable/.test(e.message ?? '')) ? true : undefined), 60_000);
  } finally {
    ctx.kubectl('-n', 'kube-system', 'patch', 'daemonset', 'verification-service', '-p', JSON.stringify({ spec: { template: { spec: { affinity: null } } } }));
  }
  await eventually(`a ready verification-service pod on ${node} again`, async () => ((await ctx.pods('k8s-app=verification-service')).some((p) => p.node === node && p.ready) ? true : undefined), 120_000);
  const r = await eventually(`readmit of ${node} once its pod serves again`, async () => {
    const run = await runCli(ctx, ['node', 'readmit', node], { router: true });
    return run.status === 0 ? run : undefined;
  }, 90_000);
  ctx.log(`${node}: ${r.stdout.trim()}`);
  assert.equal((await attestationState(ctx, node)).tainted, false);
}

/**
 * The control-plane rule (docs/adr/0037): a control plane is quarantined only while another one is
 * healthy. PCR 9 of one control plane's vTPM is extended: it is quarantined (the other is healthy).
 * Then the other's: it is the last healthy control plane, so it is withheld (condition False with
 * PCR[9], no taint, an AttestationQuarantineWithheld Event, the `withheld` counter), stays so for
 * further rounds, and `asterism node quarantine` refuses it without --force.
 */
export async function lastControlPlaneNeverQuarantined(ctx: RealClusterContext, controlPlanes: string[]): Promise<void> {
  const { intervalS } = SHORT_TIMING;
  // The first to fail is one the monitor does not run on (no eviction and Lease hand-over first).
  const monitorOn = (await ctx.pods('k8s-app=attestation-monitor')).map((p) => p.node);
  const first = controlPlanes.find((n) => !monitorOn.includes(n)) ?? controlPlanes[0]!;
  const last = controlPlanes.find((n) => n !== first)!;
  const failed = async (node: string) => {
    const s = await attestationState(ctx, node);
    return s.condition?.status === 'False' && s.condition.reason === 'MeasurementMismatch' && /PCR\[9\]/.test(String(s.condition.message)) ? s : undefined;
  };
  const firstAt = Date.now();
  await extendNodePcr(ctx.root, first, 9, 'e2e: changed boot of a control plane');
  await eventually(`${first} quarantined (${last} healthy)`, async () => ((await failed(first))?.tainted ? true : undefined), (4 * intervalS + 60) * 1000);
  const firstLatency = secondsSince(firstAt);
  // The monitor posts the Event after the taint: give it a moment (a CI run read the list in between).
  await eventually(`an AttestationQuarantined Event for ${first}`, async () => ((await monitorEvents(ctx, first, 'AttestationQuarantined')).length > 0 ? true : undefined), 60_000);

  const lastAt = Date.now();
  await extendNodePcr(ctx.root, last, 9, 'e2e: changed boot of the last control plane');
  await eventually(`${last} failed and withheld`, async () => (await failed(last)) && (await monitorEvents(ctx, last, 'AttestationQuarantineWithheld')).length > 0 ? true : undefined, (4 * intervalS + 60) * 1000);
  const lastLatency = secondsSince(lastAt);
  // Further rounds (the monitor may have moved to the last control plane after the eviction) change nothing.
  await new Promise((r) => setTimeout(r, 3 * intervalS * 1000));
  assert.equal((await attestationState(ctx, last)).tainted, false, `${last}, the last healthy control plane, is never quarantined`);
  assert.ok(await failed(last), `${last}: the verdict is recorded (False, MeasurementMismatch, PCR[9])`);
  assert.equal((await attestationState(ctx, first)).tainted, true, `${first} stays quarantined`);
  const withheld = await eventually('attestation_monitor_quarantines_total{outcome="withheld"} > 0', async () => {
    const v = await monitorSample(ctx, 'attestation_monitor_quarantines_total{outcome="withheld"}');
    return v > 0 ? v : undefined;
  }, 60_000);
  const byHand = await runCli(ctx, ['node', 'quarantine', last, '--reason', 'e2e: last control plane']);
  assert.equal(byHand.status, 1, 'the CLI refuses to quarantine the last healthy control plane without --force');
  assert.match(byHand.stderr, /last healthy control plane/);
  assert.equal((await attestationState(ctx, last)).tainted, false);
  const event = (await monitorEvents(ctx, last, 'AttestationQuarantineWithheld'))[0];
  ctx.log(`control planes: ${first} (PCR 9 extended) quarantined ${firstLatency} s after the extend; ${last} (PCR 9 extended next) failed and withheld ${lastLatency} s after its extend (interval ${intervalS} s); withheld counter ${withheld}; Event: ${event?.message ?? ''}; CLI: ${byHand.stderr.trim()}`);
}
