import * as k8s from '@kubernetes/client-node';
import { fromApiError, kubeConfigFor } from '@asterism/k8s';

export { kubeConfigFor };

/** Who the API server says we are (SelfSubjectReview). */
export async function whoAmI(kc: k8s.KubeConfig): Promise<{ username: string; groups: string[] }> {
  try {
    const review = await kc.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
    return { username: review.status?.userInfo?.username ?? '', groups: review.status?.userInfo?.groups ?? [] };
  } catch (err) {
    throw fromApiError(err, 'SelfSubjectReview');
  }
}

/**
 * Registers this node's Node object the way a kubelet does: with the node's own client
 * certificate (`system:node:<name>`, so NodeRestriction applies), then reports it Ready. The local
 * backend runs no container runtime, so the Ready condition says so in its reason.
 */
export async function registerNode(kc: k8s.KubeConfig, node: { name: string; ip: string; providerId?: string; labels?: Record<string, string> }): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const body: k8s.V1Node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: node.name, labels: { 'kubernetes.io/hostname': node.name, 'kubernetes.io/os': 'linux', ...(node.labels ?? {}) } },
    spec: node.providerId ? { providerID: node.providerId } : {},
  };
  try {
    await core.createNode({ body });
  } catch (err) {
    const e = fromApiError(err, `registering Node ${node.name}`);
    if (e.code !== 'K8S_ALREADY_EXISTS') throw e;
  }
  const now = new Date();
  try {
    const current = await core.readNode({ name: node.name });
    current.status = {
      ...(current.status ?? {}),
      addresses: [
        { type: 'InternalIP', address: node.ip },
        { type: 'Hostname', address: node.name },
      ],
      conditions: [
        { type: 'Ready', status: 'True', reason: 'AsterismLocalNode', message: 'registered by the Asterism local backend (no container runtime)', lastHeartbeatTime: now, lastTransitionTime: now },
      ],
      nodeInfo: {
        architecture: process.arch === 'x64' ? 'amd64' : process.arch,
        operatingSystem: 'linux',
        bootID: '',
        containerRuntimeVersion: 'none',
        kernelVersion: '',
        kubeProxyVersion: '',
        kubeletVersion: 'asterism-local',
        machineID: '',
        osImage: 'asterism local node',
        systemUUID: '',
      },
    };
    await core.replaceNodeStatus({ name: node.name, body: current });
  } catch (err) {
    throw fromApiError(err, `reporting status of Node ${node.name}`);
  }
}
