/**
 * `asterism upgrade plan` as a pure function (docs/protocol/upgrade.md "Plan"): from what the
 * cluster reports (its NodeVersion, nodes, etcd pods, nodes mid-join) and the supported versions,
 * the versions it may move to, the order nodes would be upgraded in with what changes on each,
 * and the checks that must pass before `apply` starts.
 */
import { checkUpgradePath, upgradeTargets, UpgradePathError } from '@asterism/versions';

/** One node as the plan needs it. */
export interface NodeFact {
  name: string;
  controlPlane: boolean;
  ready: boolean;
  /** The kubelet's version as the node reports it (`status.nodeInfo.kubeletVersion`). */
  kubeletVersion: string;
}

/** An etcd member's static pod. */
export interface EtcdFact {
  node: string;
  ready: boolean;
}

/** A JoiningNode object: the joinservice issued a ticket to `name`; it stays after the join. */
export interface JoiningFact {
  name: string;
  /** RFC 3339 time after which the ticket's join is void. */
  deadline: string;
}

/** What the plan is computed from. */
export interface ClusterFacts {
  /** `spec.kubernetesClusterVersion` of the NodeVersion. */
  clusterVersion: string;
  nodes: NodeFact[];
  etcd: EtcdFact[];
  /** JoiningNode objects (a node is mid-join while it is no Node yet and its deadline is ahead). */
  joining: JoiningFact[];
}

/** One pre-upgrade check. */
export interface PlanCheck {
  name: string;
  ok: boolean;
  detail: string;
}

/** One node's step of the rollout. */
export interface NodeStep {
  order: number;
  name: string;
  role: 'control plane' | 'worker';
  /** `kubeadm upgrade apply` on the first control plane, `kubeadm upgrade node` elsewhere. */
  action: string;
  from: string;
  to: string;
}

/** The plan `upgrade plan` prints. */
export interface UpgradePlan {
  current: string;
  /** Every version one step away, oldest first. */
  targets: string[];
  /** The version asked for, or the newest target. */
  target?: string;
  steps: NodeStep[];
  checks: PlanCheck[];
}

/** Computes the plan at `now`; `wanted` is `--kubernetes-version` (empty: the newest target). */
export function planUpgrade(facts: ClusterFacts, supported: readonly string[], wanted = '', now = new Date()): UpgradePlan {
  const targets = upgradeTargets(facts.clusterVersion, supported);
  const target = wanted || targets[targets.length - 1];
  const checks = [versionCheck(facts.clusterVersion, target, supported), readyCheck(facts), sameVersionCheck(facts), etcdCheck(facts), joinCheck(facts, now)];
  return { current: facts.clusterVersion, targets, ...(target ? { target } : {}), steps: target ? rolloutOrder(facts.nodes, target) : [], checks };
}

/** True when every check passed. */
export function planReady(plan: UpgradePlan): boolean {
  return plan.checks.every((c) => c.ok);
}

function versionCheck(current: string, target: string | undefined, supported: readonly string[]): PlanCheck {
  const name = 'version skew';
  if (!target) return { name, ok: false, detail: `no supported version is one step from ${current} (supported: ${supported.join(', ')})` };
  try {
    const to = checkUpgradePath(current, target, supported);
    return { name, ok: true, detail: `${current} -> ${to.text} is allowed` };
  } catch (err) {
    if (err instanceof UpgradePathError) return { name, ok: false, detail: err.message };
    throw err;
  }
}

function readyCheck(facts: ClusterFacts): PlanCheck {
  const notReady = facts.nodes.filter((n) => !n.ready).map((n) => n.name);
  return { name: 'every node Ready', ok: facts.nodes.length > 0 && notReady.length === 0, detail: facts.nodes.length === 0 ? 'the cluster reports no nodes' : notReady.length ? `not Ready: ${notReady.join(', ')}` : `${facts.nodes.length} nodes Ready` };
}

function sameVersionCheck(facts: ClusterFacts): PlanCheck {
  const off = facts.nodes.filter((n) => n.kubeletVersion !== facts.clusterVersion).map((n) => `${n.name} ${n.kubeletVersion || 'unknown'}`);
  return { name: 'every node on the cluster version', ok: off.length === 0, detail: off.length ? `not on ${facts.clusterVersion} (an unfinished upgrade?): ${off.join(', ')}` : `all kubelets ${facts.clusterVersion}` };
}

function etcdCheck(facts: ClusterFacts): PlanCheck {
  const planes = facts.nodes.filter((n) => n.controlPlane).map((n) => n.name);
  const bad = planes.filter((p) => !facts.etcd.some((e) => e.node === p && e.ready));
  return { name: 'etcd healthy', ok: planes.length > 0 && bad.length === 0, detail: planes.length === 0 ? 'no control-plane nodes' : bad.length ? `no Ready etcd member on ${bad.join(', ')}` : `${planes.length} etcd members Ready` };
}

function joinCheck(facts: ClusterFacts, now: Date): PlanCheck {
  const nodes = new Set(facts.nodes.map((n) => n.name));
  const mid = facts.joining.filter((j) => !nodes.has(j.name) && !(Date.parse(j.deadline) <= now.getTime()));
  return { name: 'no node mid-join', ok: mid.length === 0, detail: mid.length ? `joining: ${mid.map((j) => `${j.name} (until ${j.deadline || 'unknown'})`).join(', ')}: wait until they are Nodes or their deadlines pass` : 'none' };
}

/** Control planes first (the first one by name runs `kubeadm upgrade apply`), then workers, by name. */
function rolloutOrder(nodes: NodeFact[], target: string): NodeStep[] {
  const byName = (a: NodeFact, b: NodeFact) => a.name.localeCompare(b.name);
  const ordered = [...nodes.filter((n) => n.controlPlane).sort(byName), ...nodes.filter((n) => !n.controlPlane).sort(byName)];
  return ordered.map((n, i) => ({
    order: i + 1,
    name: n.name,
    role: n.controlPlane ? 'control plane' : 'worker',
    action: i === 0 && n.controlPlane ? `kubeadm upgrade apply ${target}` : 'kubeadm upgrade node',
    from: n.kubeletVersion,
    to: target,
  }));
}

/** The plan as the terminal shows it. */
export function renderPlan(plan: UpgradePlan): string {
  const lines = [`Cluster version: ${plan.current}`, `May move to:     ${plan.targets.length ? plan.targets.join(', ') : 'nothing (newest supported, or no one-step target)'}`];
  if (plan.target) {
    lines.push(`Plan for:        ${plan.target}`, '', 'Rollout (one node at a time: cordon, drain, kubeadm, kubelet and kubectl from hash-checked artifacts, uncordon):');
    const rows = [['#', 'NODE', 'ROLE', 'STEP', 'KUBELET'], ...plan.steps.map((s) => [String(s.order), s.name, s.role, s.action, `${s.from} -> ${s.to}`])];
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
    for (const r of rows) lines.push(`  ${r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd()}`);
  }
  lines.push('', 'Checks:');
  for (const c of plan.checks) lines.push(`  [${c.ok ? 'ok' : 'FAIL'}] ${c.name}: ${c.detail}`);
  lines.push('', planReady(plan) ? 'Ready to upgrade.' : 'Not ready: fix the failed checks first.');
  return lines.join('\n');
}
