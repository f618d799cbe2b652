/**
 * Join time on the real nodes (docs/adr/0019-node-runtime.md): per node, from the moment its
 * JoinClient's readiness probe first saw a joinservice (`joinServiceReachableAt` in its status
 * file) to its Node's Ready condition, split into stages from the node's own logs: ticket, lock +
 * files + disk re-key, kubeadm until the supervisor starts the kubelet, kubelet start to Ready.
 * Ready's `lastTransitionTime` has whole seconds; the kubelet's own log line of that transition
 * (local time, microseconds) gives the moment within that second.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RealClusterContext } from './context.js';

/** Milestones of one join, in ms since the epoch (undefined when a log lacks the line). */
export interface JoinMilestones {
  reachable: number;
  ticket?: number;
  kubeadm?: number;
  kubeletStart?: number;
  ready: number;
}

/** One node's join time and its stages in ms. */
export interface JoinTime {
  node: string;
  /** Control-plane joins also add an etcd member and start a local API server before Ready. */
  role: 'worker' | 'control plane';
  /** Why the join is left out of the percentiles (it was held by a fault on purpose). */
  excluded?: string;
  totalMs: number;
  stages: Array<[name: string, ms: number]>;
}

/** Stage durations between consecutive known milestones. */
export function joinStages(m: JoinMilestones): Array<[string, number]> {
  const points: Array<[string, number | undefined]> = [
    ['ticket', m.ticket],
    ['lock, files, disk re-key', m.kubeadm],
    ['kubeadm until kubelet start', m.kubeletStart],
    ['kubelet start to Ready', m.ready],
  ];
  const out: Array<[string, number]> = [];
  let last = m.reachable;
  for (const [name, at] of points) {
    if (at === undefined) continue;
    out.push([name, at - last]);
    last = at;
  }
  return out;
}

/** The nearest-rank percentile `p` (0-100] of `values`. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) throw new Error('no values');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** The first `starting the kubelet` line of node.sh at or after `notBefore` (its times are UTC, of that day). */
export function kubeletStartedAt(nodeLog: string, notBefore: number): number | undefined {
  const day = new Date(notBefore).toISOString().slice(0, 10);
  for (const line of nodeLog.split('\n')) {
    const m = /^(\d\d:\d\d:\d\d\.\d{3}) node\.sh\[[^\]]+\]: starting the kubelet$/.exec(line);
    if (!m) continue;
    const at = Date.parse(`${day}T${m[1]}Z`);
    if (at >= notBefore) return at;
  }
  return undefined;
}

/**
 * The kubelet's `just became ready` line at or after `notBefore`, in ms (klog: `I1125
 * 21:07:53.091258`, the host's local time, the year of `notBefore`).
 */
export function kubeletReadyAt(kubeletLog: string, notBefore: number): number | undefined {
  const year = new Date(notBefore).getFullYear();
  for (const line of kubeletLog.split('\n')) {
    if (!line.includes('"Fast updating node status as it just became ready"')) continue;
    const m = /^I(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{3})/.exec(line);
    if (!m) continue;
    const [mo, d, h, mi, sec, ms] = m.slice(1).map(Number) as [number, number, number, number, number, number];
    const at = new Date(year, mo - 1, d, h, mi, sec, ms).getTime();
    if (at >= notBefore) return at;
  }
  return undefined;
}

/**
 * The Ready moment: the kubelet's log line when it agrees with `lastTransitionTime` (in that second,
 * or up to 200 ms after it: the line follows the condition's timestamp by milliseconds), else the
 * end of that second (an upper bound).
 */
export function readyMoment(lastTransition: number, kubeletReady: number | undefined): number {
  return kubeletReady !== undefined && kubeletReady >= lastTransition && kubeletReady < lastTransition + 1200 ? kubeletReady : lastTransition + 999;
}

/** Reads one joined node's milestones from its status file, logs and Node object. */
export async function measureJoin(ctx: RealClusterContext, node: string, role: JoinTime['role'], excluded?: string): Promise<JoinTime> {
  const reachableAt = ctx.status(node)?.joinServiceReachableAt;
  if (!reachableAt) throw new Error(`${node} has no joinServiceReachableAt in its status file`);
  const ready = (await ctx.ready(node))?.lastTransitionTime;
  if (!ready) throw new Error(`${node} is not Ready`);
  const reachable = Date.parse(reachableAt);
  const log = ctx.bootstrapperLog(node);
  const at = (msg: string) => {
    const l = log.find((x) => x.msg === msg);
    return l ? Date.parse(String(l.time)) : undefined;
  };
  const text = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8') : '');
  const m: JoinMilestones = {
    reachable,
    ticket: at('received join ticket'),
    kubeadm: at('running kubeadm'),
    kubeletStart: kubeletStartedAt(text(ctx.layout.log(node, 'node')), reachable),
    ready: readyMoment(new Date(ready).getTime(), kubeletReadyAt(text(join(ctx.layout.nodeRoot(node), 'var/log/kubelet.log')), reachable)),
  };
  return { node, role, ...(excluded ? { excluded } : {}), totalMs: m.ready - m.reachable, stages: joinStages(m) };
}

/** Report lines: one per node with its stages, then p50/max per role over the joins not held by a fault. */
export function joinTimeReport(times: JoinTime[]): string[] {
  const s = (ms: number) => (ms / 1000).toFixed(1);
  const lines = times.map((t) => `${t.node} (${t.role}${t.excluded ? `; excluded: ${t.excluded}` : ''}): ${s(t.totalMs)} s = ${t.stages.map(([n, ms]) => `${n} ${s(ms)}`).join(', ')}`);
  for (const role of ['worker', 'control plane'] as const) {
    const counted = times.filter((t) => t.role === role && !t.excluded).map((t) => t.totalMs);
    if (counted.length > 0) lines.push(`join time, ${role} (joinservice reachable -> Node Ready): p50 ${s(percentile(counted, 50))} s, max ${s(Math.max(...counted))} s over ${counted.length} joins`);
  }
  return lines;
}
