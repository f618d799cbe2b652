/**
 * The disk binding store of a new cluster (init-disk-binding.ts): ConfigMap identity bindings over
 * the Kubernetes client. Its own module so that the client is loaded only when an init needs it
 * (docs/protocol/node-image.md "Boot time").
 */
import * as k8s from '@kubernetes/client-node';
import { ConfigMapIdentityBindings, ConfigMapStore, K8sError } from '@asterism/k8s';
import type { DiskBindingStore } from './init-disk-binding.js';

/**
 * The binding store of the cluster an admin kubeconfig reaches (the one `initCluster` returned:
 * system:masters, for the local and the kubeadm backend alike); a plain client, no kept-alive pool.
 */
export function clusterBindingStore(adminKubeconfig: Buffer): DiskBindingStore {
  const kc = new k8s.KubeConfig();
  try {
    kc.loadFromString(adminKubeconfig.toString('utf8'));
  } catch (err) {
    throw new K8sError('K8S_CONFIG_INVALID', `loading the admin kubeconfig: ${(err as Error).message}`, { cause: err });
  }
  return new ConfigMapIdentityBindings(new ConfigMapStore(kc.makeApiClient(k8s.CoreV1Api)));
}
