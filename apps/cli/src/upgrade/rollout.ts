/**
 * `asterism upgrade apply` as short stages (docs/protocol/upgrade.md "Apply"): checks (plan's, or
 * a resume's) -> a new components ConfigMap and the upgrade mark -> the target's images staged on
 * every node -> node by node in plan order: cordon, drain, the agent's step, Ready on the new
 * kubelet, uncordon (after the first control plane: the NodeVersion moves to the target) -> the
 * services with Helm -> done. Every stage checks its end state first, so
 * a re-run after an interruption continues and a second run changes nothing. A failed node step
 * stops the rollout naming the node, the step and the agent's typed code.
 */
import { AsterismError } from '@asterism/errors';
import { upgradeagent, type components } from '@asterism/proto';
import { planReady, planUpgrade, type ClusterFacts, type NodeStep, type PlanCheck, type UpgradePlan } from './plan.js';
import type { AgentStep } from './agent-client.js';
import type { VersionRecord } from './cluster-version.js';

/** Why `apply` stopped. */
export type UpgradeApplyCode = 'CHECKS_FAILED' | 'OTHER_UPGRADE_IN_PROGRESS' | 'NODE_STEP_FAILED' | 'NODE_NOT_READY' | 'AGENT_FAILED' | 'SERVICES_FAILED';

/** `apply` stopped; the message names the node, the step and the reason. */
export class UpgradeApplyError extends AsterismError<UpgradeApplyCode> {}

/** One node as the rollout watches it. */
export interface NodeState {
  ready: boolean;
  kubeletVersion: string;
  unschedulable: boolean;
  address: string;
}

/** What the rollout acts on (the Kubernetes API, the nodes' agents, Helm); injected. */
export interface RolloutDeps {
  facts(): Promise<ClusterFacts>;
  versionRecord(): Promise<VersionRecord>;
  /** The components of the ConfigMap the NodeVersion names. */
  currentComponents(reference: string): Promise<components.Component[]>;
  /** The target's components, computed from the current ones. */
  targetComponents(current: components.Component[]): components.Component[];
  /** The target's components ConfigMap and the upgrade mark; resolves with the ConfigMap's name. */
  recordTarget(from: string, target: string, list: components.Component[]): Promise<string>;
  /** The NodeVersion's spec to the target (what joining nodes install). */
  recordClusterVersion(target: string, componentsName: string): Promise<void>;
  /** Removes the upgrade mark. */
  recordFinished(): Promise<void>;
  node(name: string): Promise<NodeState>;
  cordon(name: string, unschedulable: boolean): Promise<void>;
  drain(name: string): Promise<string[]>;
  agentStep(address: string, step: AgentStep): Promise<upgradeagent.UpgradeResponse>;
  /** Upgrades the services' Helm release; resolves with a line for the terminal. */
  upgradeServices(from: string, to: string): Promise<string>;
  supported: readonly string[];
  say(line: string): void;
  /** How long a node may take to be Ready on the new kubelet after its step (default 5 min). */
  readyTimeoutMs?: number;
  pollMs?: number;
}

/** What a finished `apply` reports. */
export interface ApplyReport {
  from: string;
  to: string;
  /** Seconds per node that was upgraded in this run (skipped nodes are absent). */
  nodeSeconds: Record<string, number>;
  totalSeconds: number;
  nothingToDo: boolean;
}

/** Runs the rollout to `target`. */
export async function applyUpgrade(d: RolloutDeps, target: string): Promise<ApplyReport> {
  const started = Date.now();
  const [record, facts] = await Promise.all([d.versionRecord(), d.facts()]);
  if (!record.inProgress && record.clusterVersion === target && facts.nodes.every((n) => n.kubeletVersion === target)) {
    d.say(`The cluster is on ${target} already: nothing to do.`);
    return { from: target, to: target, nodeSeconds: {}, totalSeconds: 0, nothingToDo: true };
  }
  const plan = checkedPlan(record, facts, target, d.supported);
  const from = record.inProgress?.from ?? record.clusterVersion;
  d.say(`${record.inProgress ? 'Resuming the upgrade' : 'Upgrading'} ${from} -> ${target}: ${plan.steps.length} nodes, one at a time.`);
  const { list, name } = await recordVersion(d, record, from, target);
  await stageImages(d, plan.steps, target, list);
  const nodeSeconds: Record<string, number> = {};
  let specOnTarget = record.clusterVersion === target;
  for (const [i, step] of plan.steps.entries()) {
    const s = await upgradeNode(d, step, plan.steps.length, target, from, list).catch(async (err: unknown) => {
      if (i === 0 && !specOnTarget) await unmarkAfterFirstFailure(d, err, from);
      throw err;
    });
    if (s !== undefined) nodeSeconds[step.name] = s;
    if (!specOnTarget) {
      // The first control plane (kubeadm upgrade apply) runs the target: a node joining now may install it.
      await d.recordClusterVersion(target, name);
      specOnTarget = true;
      d.say(`NodeVersion: ${from} -> ${target}, components ${name} (nodes joining from now on install ${target})`);
    }
  }
  d.say(await d.upgradeServices(from, target).catch((err: unknown) => {
    throw new UpgradeApplyError('SERVICES_FAILED', `every node is on ${target}, but upgrading the services failed: ${(err as Error).message}; run apply again`);
  }));
  await d.recordFinished();
  const totalSeconds = (Date.now() - started) / 1000;
  d.say(`Upgrade to ${target} done in ${totalSeconds.toFixed(1)} s.`);
  return { from, to: target, nodeSeconds, totalSeconds, nothingToDo: false };
}

/**
 * The plan, refused unless every check passes. While an upgrade is in progress (a re-run), the
 * plan is made from its start version and a node may be on either version.
 */
export function checkedPlan(record: VersionRecord, facts: ClusterFacts, target: string, supported: readonly string[]): UpgradePlan {
  if (record.inProgress && record.inProgress.to !== target) {
    throw new UpgradeApplyError('OTHER_UPGRADE_IN_PROGRESS', `an upgrade ${record.inProgress.from} -> ${record.inProgress.to} is in progress: finish it first (asterism upgrade apply --kubernetes-version ${record.inProgress.to})`);
  }
  const from = record.inProgress?.from ?? record.clusterVersion;
  const plan = planUpgrade({ ...facts, clusterVersion: from }, supported, target);
  if (record.inProgress) {
    const off = facts.nodes.filter((n) => n.kubeletVersion !== from && n.kubeletVersion !== target).map((n) => `${n.name} ${n.kubeletVersion}`);
    const resumeCheck: PlanCheck = { name: 'every node on the start or target version', ok: off.length === 0, detail: off.length ? `on neither ${from} nor ${target}: ${off.join(', ')}` : `resuming ${from} -> ${target}` };
    plan.checks = plan.checks.map((c) => (c.name === 'every node on the cluster version' ? resumeCheck : c));
  }
  if (!planReady(plan)) {
    const failed = plan.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
    throw new UpgradeApplyError('CHECKS_FAILED', `the upgrade may not start: ${failed.join('; ')}`, { details: { failed } });
  }
  return plan;
}

/** New components ConfigMap and the upgrade mark (skipped when a resumed upgrade did it). */
async function recordVersion(d: RolloutDeps, record: VersionRecord, from: string, target: string): Promise<{ list: components.Component[]; name: string }> {
  if (record.inProgress) {
    // An upgrade marked before the components annotation existed had moved the spec already.
    const name = record.inProgress.components ?? record.componentsReference;
    d.say(`Upgrade to ${target} recorded already, components ${name}`);
    return { list: await d.currentComponents(name), name };
  }
  const list = d.targetComponents(await d.currentComponents(record.componentsReference));
  const name = await d.recordTarget(from, target, list);
  d.say(`Upgrade ${from} -> ${target} recorded, components ${name}; the NodeVersion moves to ${target} once the first control plane runs it`);
  return { list, name };
}

/**
 * The first control plane's step failed before the NodeVersion moved. When the node was
 * restored, the cluster is as before the upgrade, so the mark goes too; otherwise (restore
 * failed, or not Ready in time) it stays for a re-run to resume.
 */
async function unmarkAfterFirstFailure(d: RolloutDeps, err: unknown, from: string): Promise<void> {
  if (!(err instanceof UpgradeApplyError) || err.code !== 'NODE_STEP_FAILED' || err.details?.['rolledBack'] !== true) return;
  await d.recordFinished();
  d.say(`The NodeVersion stays on ${from} (it had not moved) and the upgrade mark is removed: nodes joining now install ${from}.`);
}

/** The target's images on every node before any node changes (kube-proxy's new image is needed everywhere once the first control plane is upgraded). */
async function stageImages(d: RolloutDeps, steps: NodeStep[], target: string, list: components.Component[]): Promise<void> {
  for (const s of steps) {
    const t = Date.now();
    const node = await d.node(s.name);
    const r = await callAgent(d, s, node.address, { kubernetesVersion: target, components: list, step: upgradeagent.Step.STEP_IMAGES });
    if (r.outcome === 'failed') throw new UpgradeApplyError('NODE_STEP_FAILED', `node ${s.name}: staging the ${target} images failed (${r.errorCode}): ${r.errorMessage}; no node was changed`, { details: { node: s.name, step: 'images', code: r.errorCode } });
    d.say(`images of ${target} staged on ${s.name} (${secs(t)} s)`);
  }
}

/** One node; resolves with its seconds, or undefined when it was done already. */
async function upgradeNode(d: RolloutDeps, s: NodeStep, total: number, target: string, from: string, list: components.Component[]): Promise<number | undefined> {
  const tag = `[${s.order}/${total} ${s.name}]`;
  const before = await d.node(s.name);
  if (before.ready && before.kubeletVersion === target && !before.unschedulable) {
    d.say(`${tag} on ${target} already`);
    return undefined;
  }
  const t = Date.now();
  await d.cordon(s.name, true);
  const evicted = await d.drain(s.name);
  d.say(`${tag} cordoned, drained (${evicted.length} pods evicted); ${s.action}...`);
  const step = s.action.startsWith('kubeadm upgrade apply') ? upgradeagent.Step.STEP_APPLY : upgradeagent.Step.STEP_NODE;
  const r = await callAgent(d, s, before.address, { kubernetesVersion: target, components: list, step });
  if (r.outcome === 'failed') {
    if (r.rolledBack) await d.cordon(s.name, false);
    const state = r.rolledBack ? `its previous binaries and configuration were restored (${from}) and it is uncordoned` : 'restoring it FAILED too: it stays cordoned, look at the node';
    throw new UpgradeApplyError('NODE_STEP_FAILED', `node ${s.name}: step "${r.failedStep}" failed (${r.errorCode}): ${r.errorMessage}; ${state}. The rollout stopped; nodes after it are unchanged.`, {
      details: { node: s.name, step: r.failedStep, code: r.errorCode, rolledBack: r.rolledBack },
    });
  }
  d.say(`${tag} ${r.outcome === 'already' ? 'agent: done already' : `agent: upgraded in ${(r.durationMs / 1000).toFixed(1)} s`}; waiting for Ready on ${target}...`);
  await waitReadyOn(d, s.name, target);
  // A control plane's new kubelet restarts its static pods (API server included): the node must
  // stay Ready on the target for 15 polls in a row before the rollout moves on.
  if (s.role === 'control plane') await waitReadyOn(d, s.name, target, 15);
  await d.cordon(s.name, false);
  const seconds = (Date.now() - t) / 1000;
  d.say(`${tag} Ready on ${target}, uncordoned (${seconds.toFixed(1)} s)`);
  return seconds;
}

async function callAgent(d: RolloutDeps, s: NodeStep, address: string, step: AgentStep): Promise<upgradeagent.UpgradeResponse> {
  try {
    return await d.agentStep(address, step);
  } catch (err) {
    throw new UpgradeApplyError('AGENT_FAILED', `node ${s.name}: its upgrade agent at ${address} could not run the step: ${(err as Error).message}`, { details: { node: s.name }, cause: err });
  }
}

/** Waits until the node is Ready on `target` in `inARow` consecutive polls (an API error breaks the row). */
async function waitReadyOn(d: RolloutDeps, name: string, target: string, inARow = 1): Promise<void> {
  const deadline = Date.now() + (d.readyTimeoutMs ?? 300_000);
  let last: NodeState | undefined;
  let row = 0;
  for (;;) {
    const now = await d.node(name).catch(() => undefined);
    if (now) last = now;
    row = now?.ready && now.kubeletVersion === target ? row + 1 : 0;
    if (row >= inARow) return;
    if (Date.now() > deadline) {
      throw new UpgradeApplyError('NODE_NOT_READY', `node ${name}: not Ready on ${target} in time (Ready ${last?.ready ?? 'unknown'}, kubelet ${last?.kubeletVersion ?? 'unknown'}); it stays cordoned`, { details: { node: name } });
    }
    await new Promise((r) => setTimeout(r, d.pollMs ?? 1000));
  }
}

const secs = (t: number) => ((Date.now() - t) / 1000).toFixed(1);
