/**
 * One node's upgrade step (docs/protocol/upgrade.md "Apply", docs/adr/0042-upgrade-agent.md):
 * end state first (done already: nothing changes), then backup -> components (hash-checked, the
 * installer) -> kubeadm (`upgrade apply <v>` on the first control plane, `upgrade node`
 * elsewhere) -> kubelet restart and health. Any failure restores the backup (and restarts the
 * kubelet when it ran the new binary), so the node stays on its old version; the result names the
 * failed stage and the typed code.
 */
import { AsterismError } from '@asterism/errors';
import type { Logger } from '@asterism/logger';
import { isImageInstallPath } from '@asterism/versions';
import type { KubeletControl } from './kubelet-control.js';
import { SNAPSHOT_PATHS, type NodeSnapshot } from './node-snapshot.js';

/** Why a step failed, by stage. */
export type UpgradeStepCode = 'COMPONENTS_FAILED' | 'KUBEADM_FAILED' | 'KUBELET_UNHEALTHY' | 'RESTORE_FAILED';

/** A failed stage of a step. */
export class UpgradeStepError extends AsterismError<UpgradeStepCode> {}

/** A component as the agent receives it. */
export interface StepComponent {
  url: string;
  hash: string;
  installPath: string;
  extract: boolean;
}

/** What a step asks for. */
export interface StepRequest {
  target: string;
  step: 'images' | 'apply' | 'node';
  components: StepComponent[];
}

/** How a step ended. */
export type StepResult =
  | { outcome: 'upgraded' | 'already' | 'images-staged' }
  | { outcome: 'failed'; failedStep: 'components' | 'kubeadm' | 'kubelet'; code: string; message: string; rolledBack: boolean };

/** What a step is built from (the node's installer, kubeadm runner, kubelet and snapshot). */
export interface StepDeps {
  install(list: StepComponent[], signal?: AbortSignal): Promise<unknown>;
  /** Runs kubeadm with `args`; rejects with its error output. */
  kubeadm(args: string[], signal?: AbortSignal): Promise<void>;
  kubelet: KubeletControl;
  snapshot: NodeSnapshot;
  logger: Logger;
  /** kubeadm preflight checks reported as warnings (the node's --ignore-preflight-errors). */
  ignorePreflightErrors: string[];
  /** kubeadm's patches folder (the kubelet patch must survive the upgrade's new configuration). */
  patchesDir: string;
  kubeletHealthyTimeoutMs?: number;
}

/** Runs `req` on this node. */
export async function runUpgradeStep(d: StepDeps, req: StepRequest, signal?: AbortSignal): Promise<StepResult> {
  if (req.step === 'images') {
    try {
      await d.install(req.components.filter((c) => isImageInstallPath(c.installPath)), signal);
      return { outcome: 'images-staged' };
    } catch (err) {
      return { outcome: 'failed', failedStep: 'components', code: codeOf(err, 'COMPONENTS_FAILED'), message: (err as Error).message, rolledBack: false };
    }
  }
  if (await isDone(d, req)) {
    d.logger.info('upgrade step already done', { target: req.target, step: req.step });
    return { outcome: 'already' };
  }
  await d.snapshot.backup();
  await d.snapshot.record({ target: req.target, step: req.step, phase: 'started', startedAt: new Date().toISOString() });
  let stage: 'components' | 'kubeadm' | 'kubelet' = 'components';
  try {
    await d.install(req.components, signal);
    stage = 'kubeadm';
    await d.kubeadm(kubeadmArgs(d, req), signal);
    stage = 'kubelet';
    await d.kubelet.restart();
    await d.kubelet.waitHealthy(d.kubeletHealthyTimeoutMs ?? 120_000, signal);
  } catch (err) {
    return rollBack(d, req, stage, err);
  }
  await d.snapshot.record({ target: req.target, step: req.step, phase: 'done', startedAt: new Date().toISOString() });
  d.logger.info('upgrade step done', { target: req.target, step: req.step });
  return { outcome: 'upgraded' };
}

/** Done when the journal says so and the binaries and (first control plane) manifests are the target's. */
async function isDone(d: StepDeps, req: StepRequest): Promise<boolean> {
  const j = await d.snapshot.journal();
  if (!j || j.target !== req.target || j.phase !== 'done') return false;
  for (const path of SNAPSHOT_PATHS.binaries) {
    const wanted = req.components.find((c) => c.installPath === path)?.hash;
    if (wanted && (await d.snapshot.fileHash(path)) !== wanted) return false;
  }
  if (req.step === 'apply' && !(await d.snapshot.staticPodImage('kube-apiserver'))?.endsWith(`:${req.target}`)) return false;
  return true;
}

/**
 * The cluster has no CoreDNS (init skips that addon, as the reference does): `upgrade apply`
 * skips its phase and its two preflight checks, which fail on a cluster without CoreDNS.
 */
const NO_COREDNS_PREFLIGHT = ['CoreDNSUnsupportedPlugins', 'CoreDNSMigration'];

function kubeadmArgs(d: StepDeps, req: StepRequest): string[] {
  const ignored = [...d.ignorePreflightErrors, ...(req.step === 'apply' ? NO_COREDNS_PREFLIGHT : [])];
  const common = ['--certificate-renewal=false', `--patches=${d.patchesDir}`, ...(ignored.length ? [`--ignore-preflight-errors=${ignored.join(',')}`] : [])];
  return req.step === 'apply' ? ['upgrade', 'apply', req.target, '--yes', '--skip-phases=addon/coredns', ...common] : ['upgrade', 'node', ...common];
}

/** Restores the backup; the kubelet is restarted when it may already run the new binary. */
async function rollBack(d: StepDeps, req: StepRequest, stage: 'components' | 'kubeadm' | 'kubelet', err: unknown): Promise<StepResult> {
  const code = codeOf(err, stage === 'components' ? 'COMPONENTS_FAILED' : stage === 'kubeadm' ? 'KUBEADM_FAILED' : 'KUBELET_UNHEALTHY');
  d.logger.error('upgrade step failed, restoring the previous binaries and configuration', { target: req.target, step: req.step, stage, code, err });
  let rolledBack = false;
  try {
    const restored = await d.snapshot.restore();
    if (stage === 'kubelet') {
      await d.kubelet.restart();
      await d.kubelet.waitHealthy(d.kubeletHealthyTimeoutMs ?? 120_000);
    }
    await d.snapshot.clearJournal();
    rolledBack = true;
    d.logger.info('node restored to its previous version', { restored });
  } catch (restoreErr) {
    d.logger.error('restoring the node failed', { err: restoreErr });
    return { outcome: 'failed', failedStep: stage, code: 'RESTORE_FAILED', message: `${(err as Error).message}; restoring failed too: ${(restoreErr as Error).message}`, rolledBack: false };
  }
  return { outcome: 'failed', failedStep: stage, code, message: (err as Error).message, rolledBack };
}

/** Restores the node when the journal shows a step that never finished (the agent started after a reboot or crash mid-step). */
export async function recoverInterruptedStep(d: Pick<StepDeps, 'snapshot' | 'kubelet' | 'logger'>): Promise<boolean> {
  const j = await d.snapshot.journal();
  if (!j || j.phase !== 'started') return false;
  d.logger.warn('an upgrade step was interrupted; restoring the previous binaries and configuration', { target: j.target, step: j.step, startedAt: j.startedAt });
  await d.snapshot.restore();
  await d.snapshot.clearJournal();
  await d.kubelet.restart();
  return true;
}

function codeOf(err: unknown, fallback: string): string {
  return err instanceof AsterismError ? err.code : fallback;
}
