/** What the InitServer needs, declared by the consumer and injected (tests pass stubs). */
import type { components } from '@asterism/proto';

/** Parameters of the first control-plane node's cluster creation (docs/protocol/kubernetes.md). */
export interface InitClusterRequest {
  kubernetesVersion: string;
  clusterName: string;
  conformanceMode: boolean;
  components: components.Component[];
  apiServerCertSans: string[];
  serviceCidr: string;
  /**
   * Secrets for the cluster services (keyservice master secret and salt, the measurement salt
   * of the join config). The reference's CLI deploys them with Helm after init; the local backend
   * starts the services itself. Backends that deploy nothing ignore them.
   */
  serviceSecrets?: { masterSecret: Buffer; masterSalt: Buffer; measurementSalt: Buffer };
}

/** Creates the Kubernetes control plane on this node and returns an admin kubeconfig. */
export interface ClusterInitializer {
  initCluster(req: InitClusterRequest, signal?: AbortSignal): Promise<Buffer>;
}

/** The node's emergency-SSH setup: CA public key file and a host certificate for the host key. */
export interface SshSetup {
  /**
   * Derives the CA from `seed`, writes its authorized_keys line, signs the node's host key for
   * `principals` and writes the host certificate.
   */
  install(seed: Buffer, principals: string[]): Promise<void>;
}
