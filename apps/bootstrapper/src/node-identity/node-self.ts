/**
 * The node's own identity as the metadata source describes it (docs/protocol/bootstrapper.md): read
 * once per bootstrap stage (init: by the init flow; join: by the join client) and handed down to the
 * node runtime and the disk binding, which never ask the metadata source again.
 */
import { k8sCompliantHostname } from '@asterism/k8s/node-name';
import type { MetadataProvider, Role } from '@asterism/metadata';

/** Who this node is: its Kubernetes node name, metadata role, VPC IP and provider ID. */
export interface NodeIdentity {
  /** The metadata name made Kubernetes-compliant (the name kubeadm, the CSR and the binding use). */
  name: string;
  role: Role;
  /** VPC IP ('' when the metadata has none). */
  ip: string;
  /** Cloud provider ID ('' when the metadata has none). */
  providerId: string;
}

/** Reads this node's identity from the metadata source once. */
export async function readNodeIdentity(metadata: Pick<MetadataProvider, 'self'>, signal?: AbortSignal): Promise<NodeIdentity> {
  const self = await metadata.self(signal);
  return { name: k8sCompliantHostname(self.Name), role: self.Role, ip: self.VPCIP, providerId: self.ProviderID };
}
