/**
 * The rollout's dependencies on a real cluster (./rollout.ts): the Kubernetes API through the
 * admin kubeconfig, the nodes' upgrade agents over aTLS and Helm for the services.
 */
import { fromApiError, type KubeClients } from '@asterism/k8s';
import { supportedKubernetesVersions, versionRow, type VersionRow } from '@asterism/versions';
import type { UpgradeAgents } from './agent-client.js';
import { readClusterFacts } from './cluster-facts.js';
import { readComponents, readVersionRecord, recordClusterVersion, recordFinished, recordTarget, targetComponents } from './cluster-version.js';
import { drainNode, setUnschedulable } from './node-drain.js';
import type { RolloutDeps } from './rollout.js';

/** Options of {@link clusterRolloutDeps}. */
export interface ClusterRolloutOptions {
  clients: Pick<KubeClients, 'core' | 'custom'>;
  agents: UpgradeAgents;
  target: string;
  artifactBase: string;
  supported: readonly string[];
  upgradeServices: (from: string, to: string) => Promise<string>;
  say: (line: string) => void;
  drainTimeoutMs: number;
  stepTimeoutMs: number;
}

/** RolloutDeps over a real cluster. */
export function clusterRolloutDeps(o: ClusterRolloutOptions): RolloutDeps {
  const { core } = o.clients;
  // Resolved only once the checks passed: an unsupported target is refused by them first.
  const row = (): VersionRow => versionRow(o.target);
  return {
    facts: () => throughRestarts(() => readClusterFacts(o.clients)),
    versionRecord: () => throughRestarts(() => readVersionRecord(o.clients)),
    currentComponents: (ref) => throughRestarts(() => readComponents(o.clients, ref)),
    targetComponents: (current) => targetComponents(row(), current, o.artifactBase, supportedKubernetesVersions().map((v) => versionRow(v))),
    recordTarget: (from, target, list) => recordTarget(o.clients, from, target, list),
    recordClusterVersion: (target, name) => throughRestarts(() => recordClusterVersion(o.clients, target, name)),
    recordFinished: () => throughRestarts(() => recordFinished(o.clients)),
    node: async (name) => {
      const n = await throughRestarts(() => core.readNode({ name })).catch((err: unknown) => {
        throw fromApiError(err, `reading node ${name}`);
      });
      return {
        ready: n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
        kubeletVersion: n.status?.nodeInfo?.kubeletVersion ?? '',
        unschedulable: n.spec?.unschedulable ?? false,
        address: n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '',
      };
    },
    cordon: (name, unschedulable) => throughRestarts(() => setUnschedulable(core, name, unschedulable)),
    drain: (name) => throughRestarts(() => drainNode(core, name, { timeoutMs: o.drainTimeoutMs })),
    agentStep: (address, step) => o.agents.run(address, step, o.stepTimeoutMs),
    upgradeServices: o.upgradeServices,
    supported: o.supported,
    say: o.say,
  };
}

/** Connection failures of an API server that is restarting (a control plane's upgrade restarts its static pods). */
const RESTARTING = /ECONNREFUSED|ECONNRESET|socket hang up|EPIPE|ETIMEDOUT|503|502|504|etcdserver|the server is currently unable|storage is \(re\)initializing|TLS handshake timeout/;

/** Runs `fn`, again while the API server answers as a restarting one does, for at most `ms`. */
export async function throughRestarts<T>(fn: () => Promise<T>, ms = 180_000, pauseMs = 2000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!RESTARTING.test((err as Error).message) || Date.now() + pauseMs > deadline) throw err;
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  }
}
