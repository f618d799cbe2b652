/**
 * Cordon, drain and uncordon one node through the Kubernetes API, as `upgrade apply` does around
 * each node's step (docs/protocol/upgrade.md "Apply"). Drain evicts (the Eviction API, so
 * PodDisruptionBudgets hold: a refused eviction is retried until the deadline) every pod on the
 * node except DaemonSet pods and static (mirror) pods, then waits until they are gone.
 */
import * as k8s from '@kubernetes/client-node';
import { AsterismError } from '@asterism/errors';
import { fromApiError } from '@asterism/k8s';

/** Why a node could not be drained: pods a budget kept (`DRAIN_TIMEOUT`) or the API failed (`DRAIN_FAILED`). */
export class DrainError extends AsterismError<'DRAIN_TIMEOUT' | 'DRAIN_FAILED'> {}

/** Options of {@link drainNode}. */
export interface DrainOptions {
  /** Deadline for the whole drain (default 5 min). */
  timeoutMs?: number;
  /** Pause between eviction retries and between checks for gone pods (default 1 s). */
  pollMs?: number;
  signal?: AbortSignal;
  /** Progress lines (`evicted default/web-1`). */
  progress?: (line: string) => void;
}

/** Marks the node unschedulable (`true`) or schedulable again (`false`). */
export async function setUnschedulable(core: k8s.CoreV1Api, node: string, unschedulable: boolean): Promise<void> {
  try {
    await core.patchNode({ name: node, body: { spec: { unschedulable } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
  } catch (err) {
    throw fromApiError(err, `${unschedulable ? 'cordoning' : 'uncordoning'} node ${node}`);
  }
}

/** Evicts the node's pods (see the module comment) and waits until they are gone; returns their `namespace/name`. */
export async function drainNode(core: k8s.CoreV1Api, node: string, o: DrainOptions = {}): Promise<string[]> {
  const deadline = Date.now() + (o.timeoutMs ?? 300_000);
  const pollMs = o.pollMs ?? 1000;
  const targets = (await podsOn(core, node)).filter(evictable);
  const pending = new Map(targets.map((p) => [key(p), p]));
  const evicted = new Set<string>();
  while (evicted.size < pending.size) {
    for (const [id, pod] of pending) {
      if (evicted.has(id)) continue;
      if (await evict(core, pod)) {
        evicted.add(id);
        o.progress?.(`evicted ${id}`);
      }
    }
    if (evicted.size < pending.size) await pause(pollMs, deadline, [...pending.keys()].filter((id) => !evicted.has(id)), node, o.signal);
  }
  for (;;) {
    const left = (await podsOn(core, node)).filter(evictable).map(key).filter((id) => pending.has(id));
    if (left.length === 0) return [...pending.keys()];
    await pause(pollMs, deadline, left, node, o.signal);
  }
}

async function podsOn(core: k8s.CoreV1Api, node: string): Promise<k8s.V1Pod[]> {
  try {
    return (await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` })).items;
  } catch (err) {
    throw new DrainError('DRAIN_FAILED', `listing the pods of node ${node}: ${(err as Error).message}`, { cause: err });
  }
}

/** Not DaemonSet pods (they would come back at once) and not static pods (the kubelet owns them); finished pods need no eviction. */
function evictable(p: k8s.V1Pod): boolean {
  if (p.metadata?.annotations?.['kubernetes.io/config.mirror'] !== undefined) return false;
  if (p.metadata?.ownerReferences?.some((r) => r.kind === 'DaemonSet')) return false;
  return p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';
}

const key = (p: k8s.V1Pod) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`;

/** True when the eviction was accepted (or the pod is gone); false when a disruption budget refused it for now. */
async function evict(core: k8s.CoreV1Api, pod: k8s.V1Pod): Promise<boolean> {
  const name = pod.metadata?.name ?? '';
  const namespace = pod.metadata?.namespace ?? '';
  try {
    await core.createNamespacedPodEviction({ name, namespace, body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } } });
    return true;
  } catch (err) {
    const code = (err as { code?: number }).code;
    if (code === 404) return true;
    if (code === 429) return false;
    throw new DrainError('DRAIN_FAILED', `evicting ${namespace}/${name}: ${(err as Error).message}`, { cause: err });
  }
}

async function pause(ms: number, deadline: number, left: string[], node: string, signal?: AbortSignal): Promise<void> {
  if (Date.now() + ms > deadline) {
    throw new DrainError('DRAIN_TIMEOUT', `node ${node} did not drain in time; still there: ${left.join(', ')} (a PodDisruptionBudget may forbid it)`, { details: { node, pods: left } });
  }
  signal?.throwIfAborted();
  await new Promise((r) => setTimeout(r, ms));
}
