/** What the JoinClient needs, declared by the consumer and injected. */
import type { join, components } from '@asterism/proto';
import type { Role } from '@asterism/metadata';

/** Calls join.API on one joinservice endpoint over aTLS (the node attests itself). */
export interface JoinServiceDialer {
  issueJoinTicket(endpoint: string, req: join.IssueJoinTicketRequest, options: { joinId: string; signal?: AbortSignal }): Promise<join.IssueJoinTicketResponse>;
  issueRejoinTicket(endpoint: string, req: join.IssueRejoinTicketRequest, options: { joinId: string; signal?: AbortSignal }): Promise<join.IssueRejoinTicketResponse>;
}

/** Creates the kubelet key pair and CSR; the private key never leaves the node. */
export interface KubeletCsrFactory {
  create(nodeName: string, ips: string[]): Promise<{ csrDer: Buffer; privateKeyPem: string }>;
}

/** The node's SSH host key (public part in SSH wire format). */
export interface HostKeySource {
  publicKeyWire(): Promise<Buffer>;
}

/** What a joining node hands to its Kubernetes backend. */
export interface JoinClusterRequest {
  apiServerEndpoint: string;
  token: string;
  caCertHashes: string[];
  role: Role;
  nodeName: string;
  nodeIp: string;
  /** The metadata's provider ID of this node ('' when it has none). */
  providerId: string;
  components: components.Component[];
  kubeletCertPem: Buffer;
  kubeletKeyPem: string;
  /** The id of the join whose ticket this is: backends put it on their log lines (docs/protocol/join-ticket.md). */
  joinId?: string;
}

/** Joins this node to the cluster (kubeadm join, or the local backend's registration). */
export interface ClusterJoiner {
  joinCluster(req: JoinClusterRequest, signal?: AbortSignal): Promise<void>;
}
