/** What the InitServer needs, declared by the consumer and injected (tests pass stubs). */
import type { components } from '@asterism/proto';
import type { NodeIdentity } from '../node-identity/node-self.js';

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
  /** This node, read once from the metadata source by the init flow (runtimes never re-read it). */
  node: NodeIdentity;
}

/** Creates the Kubernetes control plane on this node and returns an admin kubeconfig. */
export interface ClusterInitializer {
  initCluster(req: InitClusterRequest, signal?: AbortSignal): Promise<Buffer>;
  /**
   * Starts what the new cluster serves to joining nodes (the local backend's keyservice and
   * joinservice). The init flow calls it only once this node's disk is bound, so no join can claim
   * that disk first (docs/adr/0008-attestation-bound-node-identity.md). Backends whose services are
   * deployed later (kubeadm: the CLI installs them with Helm) leave it out.
   */
  startServices?(signal?: AbortSignal): Promise<void>;
}

/**
 * Binds this node's state disk to its own attestation key and name in the new cluster, as the
 * joinservice binds a joining node's disk on its first join (docs/adr/0008). `adminKubeconfig` is
 * what {@link ClusterInitializer.initCluster} returned. Resolves `created`, or `already-bound` when
 * an equal binding exists; a binding to another identity is an error.
 */
export interface OwnDiskBinding {
  bind(req: { adminKubeconfig: Buffer; diskUuid: string; nodeName: string }, signal?: AbortSignal): Promise<'created' | 'already-bound'>;
}

/** This node's identity from the metadata source (node-identity/node-self.ts). */
export interface NodeIdentitySource {
  read(signal?: AbortSignal): Promise<NodeIdentity>;
}

/** The node's emergency-SSH setup: CA public key file and a host certificate for the host key. */
export interface SshSetup {
  /**
   * Derives the CA from `seed`, writes its authorized_keys line, signs the node's host key for
   * `principals` and writes the host certificate.
   */
  install(seed: Buffer, principals: string[]): Promise<void>;
}
