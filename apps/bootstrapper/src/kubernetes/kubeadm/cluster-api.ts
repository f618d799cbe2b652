import * as k8s from '@kubernetes/client-node';
import type { components } from '@asterism/proto';
import { setUpClusterObjects } from '@asterism/k8s-controlplane';

/** The node annotation naming the components ConfigMap the node was set up with. */
export const COMPONENTS_ANNOTATION = 'constellation.edgeless.systems/kubernetes-components';

/** What the first control plane leaves in the cluster after kubeadm (consumer-declared port). */
export interface ClusterObjectsWriter {
  write(o: { nodeName: string; components: components.Component[]; kubernetesVersion: string }): Promise<void>;
}

/**
 * Cluster objects through the API with the admin kubeconfig: the CRDs, the immutable components
 * ConfigMap, the NodeVersion, `internal-config`, and the components annotation on this node.
 */
export function apiClusterObjects(adminKubeconfig: string): ClusterObjectsWriter {
  return {
    async write(o) {
      const kc = new k8s.KubeConfig();
      kc.loadFromFile(adminKubeconfig);
      const name = await setUpClusterObjects(kc, { components: o.components, kubernetesVersion: o.kubernetesVersion });
      await kc.makeApiClient(k8s.CoreV1Api).patchNode(
        { name: o.nodeName, body: { metadata: { annotations: { [COMPONENTS_ANNOTATION]: name } } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    },
  };
}

/** Waits until the API server answers a namespace list with the admin kubeconfig. */
export class ApiServerReadiness {
  constructor(
    private readonly kubeconfigPath: string,
    private readonly intervalMs = 1000,
  ) {}

  async wait(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(this.kubeconfigPath);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    for (;;) {
      signal?.throwIfAborted();
      try {
        await core.listNamespace({ limit: 1 });
        return;
      } catch (err) {
        last = err;
      }
      if (Date.now() > deadline) throw new Error(`API server not ready after ${timeoutMs / 1000} s: ${last instanceof Error ? last.message : String(last)}`);
      await new Promise((r) => setTimeout(r, this.intervalMs));
    }
  }
}
