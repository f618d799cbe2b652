/**
 * Reads what `upgrade plan` needs from the cluster (docs/protocol/upgrade.md "Plan"): the
 * NodeVersion's cluster version, every Node's readiness, role and kubelet version, the etcd static
 * pods in kube-system and the JoiningNode objects of nodes that hold a ticket but are not Nodes yet.
 */
import type * as k8s from '@kubernetes/client-node';
import { fromApiError, K8sError, NODE_VERSION_NAME, UPDATE_GROUP, UPDATE_VERSION, type KubeClients } from '@asterism/k8s';
import type { ClusterFacts, EtcdFact, JoiningFact, NodeFact } from './plan.js';

const CONTROL_PLANE_LABEL = 'node-role.kubernetes.io/control-plane';

/** The facts of the cluster `clients` reach. */
export async function readClusterFacts(clients: Pick<KubeClients, 'core' | 'custom'>): Promise<ClusterFacts> {
  const [clusterVersion, nodes, etcd, joining] = await Promise.all([clusterVersionOf(clients.custom), nodeFacts(clients.core), etcdFacts(clients.core), joiningNodes(clients.custom)]);
  return { clusterVersion, nodes, etcd, joining };
}

async function clusterVersionOf(custom: k8s.CustomObjectsApi): Promise<string> {
  let obj: { spec?: { kubernetesClusterVersion?: unknown } };
  try {
    obj = (await custom.getClusterCustomObject({ group: UPDATE_GROUP, version: UPDATE_VERSION, plural: 'nodeversions', name: NODE_VERSION_NAME })) as typeof obj;
  } catch (err) {
    throw fromApiError(err, `getting NodeVersion ${NODE_VERSION_NAME} (written by init)`);
  }
  const v = obj?.spec?.kubernetesClusterVersion;
  if (typeof v !== 'string' || v === '') throw new K8sError('K8S_NOT_FOUND', `NodeVersion ${NODE_VERSION_NAME} has no spec.kubernetesClusterVersion`);
  return v;
}

async function nodeFacts(core: k8s.CoreV1Api): Promise<NodeFact[]> {
  let list: k8s.V1NodeList;
  try {
    list = await core.listNode();
  } catch (err) {
    throw fromApiError(err, 'listing nodes');
  }
  return list.items.map((n) => ({
    name: n.metadata?.name ?? '',
    controlPlane: n.metadata?.labels?.[CONTROL_PLANE_LABEL] !== undefined,
    ready: n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    kubeletVersion: n.status?.nodeInfo?.kubeletVersion ?? '',
  }));
}

async function etcdFacts(core: k8s.CoreV1Api): Promise<EtcdFact[]> {
  let list: k8s.V1PodList;
  try {
    list = await core.listNamespacedPod({ namespace: 'kube-system', labelSelector: 'component=etcd' });
  } catch (err) {
    throw fromApiError(err, 'listing etcd pods in kube-system');
  }
  return list.items.map((p) => ({ node: p.spec?.nodeName ?? '', ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false }));
}

async function joiningNodes(custom: k8s.CustomObjectsApi): Promise<JoiningFact[]> {
  try {
    const list = (await custom.listClusterCustomObject({ group: UPDATE_GROUP, version: UPDATE_VERSION, plural: 'joiningnodes' })) as { items?: { metadata?: { name?: string }; spec?: { name?: string; deadline?: string } }[] };
    return (list.items ?? []).map((o) => ({ name: o.spec?.name ?? o.metadata?.name ?? '', deadline: o.spec?.deadline ?? '' })).filter((j) => j.name !== '');
  } catch (err) {
    throw fromApiError(err, 'listing JoiningNodes');
  }
}
