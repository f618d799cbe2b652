/**
 * What the continuous-attestation scenarios on the real nodes share (attestation-checks.ts,
 * docs/protocol/continuous-attestation.md): the real CLI (`asterism node|nodes`) run from the host
 * or from the router namespace (where the nodes' InternalIPs are reachable), a node's
 * `AttestationVerified` condition and quarantine taint, the deny list, the monitor's Events, its
 * log and its metrics, and the monitor's interval and grace period changed on the running cluster.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { CONDITION_TYPE, decodeDenyList, DENY_LIST, EVENT_SOURCE, QUARANTINE_TAINT, type DenyEntry } from '@asterism/node-attestation';
import { eventually } from '@asterism/testing';
import { TSX, WORKSPACE_ROOT } from '../../cluster.js';
import { NETWORK } from '../network.js';
import type { RealClusterContext } from './context.js';

/** The monitor's Prometheus port (deploy/charts/attestationmonitor values `metricsPort`). */
export const MONITOR_METRICS_PORT = 9206;

/** Exit code and output of one CLI run. */
export interface CliRun {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * `asterism <args>` with the cluster's workspace. `router: true` runs it inside the router
 * namespace with init's kubeconfig (node addresses reachable: readmit's default endpoint);
 * otherwise on the host with the forwarded kubeconfig. Asynchronous: a test may serve the CLI.
 */
export function runCli(ctx: RealClusterContext, args: string[], opts: { router?: boolean } = {}): Promise<CliRun> {
  const kubeconfig = opts.router ? ctx.layout.kubeconfig : ctx.layout.hostKubeconfig;
  const cli = [process.execPath, '--import', TSX, join(WORKSPACE_ROOT, 'apps/cli/src/main.ts'), ...args, `--workspace=${ctx.layout.workspace}`, `--kubeconfig=${kubeconfig}`];
  const argv = opts.router ? ['nsenter', `--net=/run/netns/${NETWORK.routerNamespace}`, ...cli] : cli;
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: WORKSPACE_ROOT, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ status: code ?? -1, stdout, stderr }));
  });
}

/** The node's `AttestationVerified` condition and whether it carries the quarantine taint. */
export async function attestationState(ctx: RealClusterContext, node: string): Promise<{ condition: k8s.V1NodeCondition | undefined; tainted: boolean }> {
  const n = await ctx.core.readNode({ name: node });
  return { condition: n.status?.conditions?.find((c) => c.type === CONDITION_TYPE), tainted: (n.spec?.taints ?? []).some((t) => t.key === QUARANTINE_TAINT && t.effect === 'NoExecute') };
}

/** Waits until the monitor verified every node in `nodes` by a check made after `since`. */
export async function verifiedSince(ctx: RealClusterContext, nodes: string[], since: number, timeoutMs: number): Promise<void> {
  for (const node of nodes) {
    await eventually(`${node} AttestationVerified=True by a check after ${new Date(since).toISOString()}`, async () => {
      const { condition, tainted } = await attestationState(ctx, node);
      const at = Date.parse(String(condition?.lastHeartbeatTime ?? 0));
      return condition?.status === 'True' && !tainted && at >= since - 1000 ? true : undefined;
    }, timeoutMs);
  }
}

/** The deny list's entries (ConfigMap kube-system/asterism-attestation-denylist). */
export async function denyEntries(ctx: RealClusterContext): Promise<DenyEntry[]> {
  const cm = await ctx.core.readNamespacedConfigMap({ namespace: DENY_LIST.namespace, name: DENY_LIST.name }).catch(() => undefined);
  return decodeDenyList(cm?.data);
}

/** The monitor's Events about `node` with `reason` (namespace default). */
export async function monitorEvents(ctx: RealClusterContext, node: string, reason: string): Promise<k8s.CoreV1Event[]> {
  const list = await ctx.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${node}` });
  return list.items.filter((e) => e.reason === reason && e.source?.component === EVENT_SOURCE);
}

/** The monitor pods' JSON log lines (every pod of the Deployment, the current containers). */
export function monitorLog(ctx: RealClusterContext): Array<Record<string, unknown>> {
  const text = ctx.kubectl('-n', 'kube-system', 'logs', '-l', 'k8s-app=attestation-monitor', '--tail=-1', '--prefix=false');
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The sum of one series over the monitor pods' metrics. */
export async function monitorSample(ctx: RealClusterContext, series: string): Promise<number> {
  const pods = await ctx.pods('k8s-app=attestation-monitor');
  let sum = 0;
  for (const p of pods) {
    const line = ctx.podMetrics(p.name, MONITOR_METRICS_PORT).split('\n').find((l) => l.startsWith(`${series} `));
    sum += line ? Number(line.slice(series.length + 1)) : 0;
  }
  return sum;
}

/**
 * Sets the monitor's `--interval` and `--grace` on the running Deployment (the chart's
 * `intervalSeconds` / `graceSeconds` render into these arguments) and waits for the rollout.
 */
export function setMonitorTiming(ctx: RealClusterContext, intervalS: number, graceS: number): void {
  const dep = JSON.parse(ctx.kubectl('-n', 'kube-system', 'get', 'deployment', 'attestation-monitor', '-o', 'json')) as { spec: { template: { spec: { containers: Array<{ args: string[] }> } } } };
  const args = dep.spec.template.spec.containers[0]!.args.map((a) => (a.startsWith('--interval=') ? `--interval=${intervalS}` : a.startsWith('--grace=') ? `--grace=${graceS}` : a));
  ctx.kubectl('-n', 'kube-system', 'patch', 'deployment', 'attestation-monitor', '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/args', value: args }]));
  ctx.kubectl('-n', 'kube-system', 'rollout', 'status', 'deployment/attestation-monitor', '--timeout=120s');
}
