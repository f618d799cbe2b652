/**
 * `asterism upgrade apply` on the real nodes (docs/protocol/upgrade.md, issue "Upgrades"): the
 * cluster was created at the older minor with every bootstrapper as its node's upgrade agent
 * (`up --upgrade-agent`). A Deployment (PodDisruptionBudget minAvailable 1) is polled the whole
 * time and a ConfigMap written before is read after; faults: a target two minors ahead refused
 * before any change, a tampered kubeadm artifact (the first node stays Ready on the old version,
 * the rollout stops naming node, step and code), the CLI killed mid-rollout and run again; a
 * second run changes nothing; a worker that joins afterwards runs the new version.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { copyFile, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { artifactsRoot } from '@asterism/k8s-testenv';
import { eventually } from '@asterism/testing';
import { addRealNode } from '../faults.js';
import { runUpgradeCli, type CliRun } from '../upgrade-target.js';
import type { RealClusterContext } from './context.js';

const NS = 'default';
const APP = 'upgrade-web';

/** Ready replicas of the probe Deployment over time. */
export interface Availability {
  stop(): Promise<{ samples: number; minReady: number; zeroSamples: number }>;
}

/** A 2-replica Deployment that may run anywhere (control planes too), a PDB minAvailable 1, a ConfigMap; polls readiness every 0.5 s until stopped. */
export async function startAvailabilityProbe(ctx: RealClusterContext): Promise<Availability & { data: string }> {
  const data = randomBytes(16).toString('hex');
  await ctx.core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'upgrade-data' }, data: { value: data } } });
  const labels = { app: APP };
  const apps = ctx.kc.makeApiClient(k8s.AppsV1Api);
  await apps.createNamespacedDeployment({
    namespace: NS,
    body: {
      metadata: { name: APP },
      spec: {
        replicas: 2,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            tolerations: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' }],
            terminationGracePeriodSeconds: 2,
            containers: [{ name: 'web', image: 'localhost/asterism/busybox:1.35', imagePullPolicy: 'Never', command: ['sh', '-c', 'exec sleep 36000'], readinessProbe: { exec: { command: ['sh', '-c', 'exit 0'] }, periodSeconds: 1 } }],
          },
        },
      },
    },
  });
  await ctx.kc.makeApiClient(k8s.PolicyV1Api).createNamespacedPodDisruptionBudget({ namespace: NS, body: { metadata: { name: APP }, spec: { minAvailable: 1, selector: { matchLabels: labels } } } });
  await eventually('probe Deployment: 2 ready replicas', async () => ((await readyReplicas(apps)) === 2 ? true : undefined), 120_000);
  let samples = 0;
  let minReady = Infinity;
  let zeroSamples = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const r = await readyReplicas(apps).catch(() => undefined);
      // An API server restarting (the control plane's own upgrade) is no sample about the workload.
      if (r !== undefined) {
        samples++;
        minReady = Math.min(minReady, r);
        if (r === 0) zeroSamples++;
      }
      await new Promise((res) => setTimeout(res, 500));
    }
  })();
  return {
    data,
    stop: async () => {
      running = false;
      await loop;
      return { samples, minReady, zeroSamples };
    },
  };
}

async function readyReplicas(apps: k8s.AppsV1Api): Promise<number> {
  return (await apps.readNamespacedDeployment({ name: APP, namespace: NS })).status?.readyReplicas ?? 0;
}

/** Kubelet versions by node. */
export async function kubeletVersions(ctx: RealClusterContext): Promise<Record<string, string>> {
  return Object.fromEntries((await ctx.core.listNode()).items.map((n) => [n.metadata!.name!, n.status?.nodeInfo?.kubeletVersion ?? '']));
}

async function clusterVersion(ctx: RealClusterContext): Promise<string> {
  const nv = (await ctx.kc.makeApiClient(k8s.CustomObjectsApi).getClusterCustomObject({ group: 'update.edgeless.systems', version: 'v1alpha1', plural: 'nodeversions', name: 'constellation-version' })) as { spec: { kubernetesClusterVersion: string } };
  return nv.spec.kubernetesClusterVersion;
}

/**
 * Removes a JoiningNode whose node will never join (a test's ticket for a fictional node): while
 * its deadline is ahead, plan's "no node mid-join" check rightly refuses the upgrade. An operator
 * does the same after a join that was given up.
 */
export async function removeAbandonedJoin(ctx: RealClusterContext, name: string): Promise<void> {
  await ctx.kc.makeApiClient(k8s.CustomObjectsApi).deleteClusterCustomObject({ group: 'update.edgeless.systems', version: 'v1alpha1', plural: 'joiningnodes', name }).catch((err: unknown) => {
    if ((err as { code?: number }).code !== 404) throw err;
  });
}

/** plan and apply to a version two minors ahead are refused; nothing changed. */
export async function refusesTwoMinorsAhead(ctx: RealClusterContext, from: string): Promise<void> {
  const [maj, min] = from.replace(/^v/, '').split('.').map(Number);
  const ahead = `v${maj}.${min! + 2}.0`;
  const plan = await runUpgradeCli(ctx.layout, 'plan', ahead);
  assert.equal(plan.code, 1, `plan to ${ahead} fails its checks: ${plan.stdout}`);
  assert.match(plan.stdout, /\[FAIL\] version skew/);
  const apply = await runUpgradeCli(ctx.layout, 'apply', ahead);
  assert.equal(apply.code, 1, apply.stderr);
  assert.match(apply.stderr, /CHECKS_FAILED: the upgrade may not start: version skew/);
  assert.equal(await clusterVersion(ctx), from, 'NodeVersion unchanged');
  ctx.log(`upgrade: apply to ${ahead} refused: ${apply.stderr.trim().split('\n').pop()}`);
}

/**
 * The target's kubeadm artifact replaced by other bytes (the original is moved aside and put back,
 * never written to): the first node's step fails at the hash check, the node stays Ready on `from`
 * and schedulable, the rollout stops with a message naming node, step and code.
 */
export async function tamperedKubeadmStopsRollout(ctx: RealClusterContext, from: string, to: string, firstNode: string): Promise<void> {
  const file = join(artifactsRoot(), to, 'kubeadm');
  const aside = `${file}.upgrade-test-original`;
  await rename(file, aside);
  let run: CliRun;
  try {
    await copyFile(aside, file);
    await writeFile(file, Buffer.concat([await readFile(file), Buffer.from('tampered')]));
    run = await runUpgradeCli(ctx.layout, 'apply', to, { onLine: (l) => ctx.log(`upgrade (tampered): ${l}`) });
  } finally {
    await rm(file, { force: true });
    await rename(aside, file);
  }
  assert.equal(run.code, 1, run.stdout);
  assert.match(run.stderr, new RegExp(`NODE_STEP_FAILED: node ${firstNode}: step "components" failed \\(HASH_MISMATCH\\): .*kubeadm.*restored \\(${from.replace(/\./g, '\\.')}\\)`));
  ctx.log(`upgrade: tampered kubeadm: ${run.stderr.trim()}`);
  const node = await ctx.core.readNode({ name: firstNode });
  assert.equal(node.status?.nodeInfo?.kubeletVersion, from);
  assert.ok(await ctx.ready(firstNode), `${firstNode} Ready`);
  assert.notEqual(node.spec?.unschedulable, true, `${firstNode} uncordoned`);
  assert.equal(await clusterVersion(ctx), from, 'the NodeVersion never moved: a node joining now installs the start version');
}

/** Per-node seconds and the total, from apply's progress lines. */
export function timingsOf(stdout: string): { nodes: Record<string, number>; total?: number } {
  const nodes: Record<string, number> = {};
  for (const m of stdout.matchAll(/\[\d+\/\d+ (\S+)\] Ready on \S+, uncordoned \(([\d.]+) s\)/g)) nodes[m[1]!] = Number(m[2]);
  const total = /Upgrade to \S+ done in ([\d.]+) s/.exec(stdout)?.[1];
  return { nodes, ...(total ? { total: Number(total) } : {}) };
}

/** apply, optionally killed (SIGKILL) when the second node is being upgraded and run again; every node ends on `to`. */
export async function applyUpgradeTo(ctx: RealClusterContext, to: string, o: { killMidRollout?: boolean } = {}): Promise<CliRun> {
  if (o.killMidRollout) {
    const killed = await runUpgradeCli(ctx.layout, 'apply', to, { onLine: (l) => ctx.log(`upgrade (to be killed): ${l}`), killWhen: /^\[2\/\d+ \S+\] cordoned, drained/ });
    assert.equal(killed.code, null, `the CLI was killed mid-rollout (it ended by itself: ${killed.stderr})`);
    ctx.log('upgrade: CLI killed while the second node was being upgraded; running apply again');
  }
  const run = await runUpgradeCli(ctx.layout, 'apply', to, { onLine: (l) => ctx.log(`upgrade: ${l}`) });
  assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
  const versions = await kubeletVersions(ctx);
  assert.ok(Object.values(versions).every((v) => v === to), `every node on ${to}: ${JSON.stringify(versions)}`);
  assert.equal(await clusterVersion(ctx), to);
  return run;
}

/** The probe kept a ready replica; the ConfigMap reads back. */
export async function workloadAndDataKept(ctx: RealClusterContext, probe: Availability & { data: string }): Promise<void> {
  const a = await probe.stop();
  ctx.log(`upgrade: probe Deployment ${a.samples} samples, min ready replicas ${a.minReady}`);
  assert.ok(a.samples > 20, 'the Deployment was polled throughout');
  assert.equal(a.zeroSamples, 0, 'never without a ready replica');
  const cm = await ctx.core.readNamespacedConfigMap({ name: 'upgrade-data', namespace: NS });
  assert.equal(cm.data?.value, probe.data, 'the ConfigMap written before is read after');
}

/** A second apply changes nothing (the NodeVersion keeps its resourceVersion). */
export async function secondApplyChangesNothing(ctx: RealClusterContext, to: string): Promise<void> {
  const before = await nodeVersionRevision(ctx);
  const run = await runUpgradeCli(ctx.layout, 'apply', to);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /already: nothing to do/);
  assert.equal(await nodeVersionRevision(ctx), before, 'NodeVersion untouched');
}

async function nodeVersionRevision(ctx: RealClusterContext): Promise<string> {
  const nv = (await ctx.kc.makeApiClient(k8s.CustomObjectsApi).getClusterCustomObject({ group: 'update.edgeless.systems', version: 'v1alpha1', plural: 'nodeversions', name: 'constellation-version' })) as { metadata: { resourceVersion: string } };
  return nv.metadata.resourceVersion;
}

/** A worker added after the upgrade installs and runs `to`. */
export async function lateWorkerRunsNewVersion(ctx: RealClusterContext, name: string, to: string): Promise<void> {
  await addRealNode(ctx.root, name);
  await ctx.waitJoinedAndReady(name);
  const node = await ctx.core.readNode({ name });
  assert.equal(node.status?.nodeInfo?.kubeletVersion, to, `${name} joined on ${to}`);
}
