/**
 * What the ticket issuer needs from the outside world, declared here by the consumer and
 * injected through the constructor (tests pass stubs; main wires the real implementations).
 */
import type { SshPublicKey } from '@asterism/crypto';
import type { KubeletCertificateSubject } from '@asterism/k8s';
import type { components } from '@asterism/proto';

/** Keyservice access: `GetDataKey(id, length)` (ids without the `key-` prefix), tagged with the join id for its logs. */
export interface DataKeySource {
  getDataKey(id: string, length: number, signal?: AbortSignal, joinId?: string): Promise<Buffer>;
}

/** A kubeadm bootstrap token plus the discovery data a node needs to trust the API server. */
export interface JoinToken {
  apiServerEndpoint: string;
  token: string;
  discoveryTokenCaCertHash: string;
}

/** Creates a short-lived bootstrap token. */
export interface JoinTokenSource {
  createJoinToken(ttlMs: number): Promise<JoinToken>;
}

/** Kubernetes components for joining nodes (NodeVersion -> ConfigMap). */
export interface ComponentsSource {
  /** Name of the components ConfigMap referenced by the NodeVersion. */
  componentsReference(): Promise<string>;
  components(configMapName: string): Promise<components.Component[]>;
}

/**
 * A kubelet CSR parsed and checked once, at request validation: the node name plus what its
 * certificate is issued for (subject, key, IP SANs). The signer gets this object, not the DER.
 */
export interface ParsedKubeletCsr extends KubeletCertificateSubject {
  nodeName: string;
}

/** Signs kubelet client certificates from CSRs (the cluster CA). */
export interface KubeletCertSigner {
  /** Returns the PEM certificate for a validated CSR. */
  sign(csr: ParsedKubeletCsr): Promise<Buffer>;
}

/** Reads the control-plane PKI files handed to joining control-plane nodes. */
export interface ControlPlaneFiles {
  read(): Promise<Array<{ name: string; data: Buffer }>>;
}

/** Records a joining node (JoiningNode CR). */
export interface JoiningNodeRecorder {
  add(spec: { nodeName: string; componentsReference: string; isControlPlane: boolean }): Promise<void>;
}

/** Extra SSH principals from the kubeadm ClusterConfiguration (apiServer.certSANs). */
export interface CertSansSource {
  certSans(): Promise<string[]>;
}

/** The emergency SSH CA: signs host certificates. */
export interface SshHostCertSigner {
  /**
   * Builds the CA from `seed` and signs a host certificate for the validated `hostKey`.
   * Returns authorized_keys lines of the CA public key and of the certificate.
   */
  sign(seed: Buffer, hostKey: SshPublicKey, principals: string[]): Promise<{ caPublicKey: Buffer; certificate: Buffer }>;
}
