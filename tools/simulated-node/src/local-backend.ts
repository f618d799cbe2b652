import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isIP } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { k8sCompliantHostname } from '@asterism/k8s';
import {
  buildKubeconfig,
  createLeaf,
  setUpBootstrapTokenAccess,
  setUpClusterObjects,
  startControlPlane,
  type ControlPlaneBinaries,
  type RunningControlPlane,
} from '@asterism/k8s-controlplane';
import type { Logger } from '@asterism/logger';
import type { ClusterInitializer, ClusterJoiner, InitClusterRequest, JoinClusterRequest } from '@asterism/bootstrapper/runtime';
import { discoverCluster } from './discovery.js';
import { kubeConfigFor, registerNode, whoAmI } from './node-registration.js';

/** What node 0 runs next to its control plane: keyservice and joinservice (LocalServices). */
export interface ClusterServices {
  start(ctx: ClusterServicesContext): Promise<void>;
  stop(): Promise<void>;
}

/** Inputs of the cluster services, all produced by init. */
export interface ClusterServicesContext {
  /** kubeadm-like folder: admin.conf, pki/. */
  kubernetesDir: string;
  adminKubeconfigPath: string;
  /** host:port of the API server, put into join tickets. */
  apiServerEndpoint: string;
  /** The node's IP (services listen there). */
  nodeIp: string;
  secrets: NonNullable<InitClusterRequest['serviceSecrets']>;
  /** kubeadm ClusterConfiguration YAML (certSANs become SSH principals of joining nodes). */
  clusterConfigurationPath: string;
}

/**
 * The `local` Kubernetes backend's init (docs/adr/0005-local-kubernetes-backend.md): a real control plane (etcd,
 * kube-apiserver, kube-controller-manager) on the node's IP instead of kubeadm, then what the
 * reference's InitCluster and Helm deployment leave behind: bootstrap-token access, the CRDs, the
 * components ConfigMap and NodeVersion, `internal-config` and this node's Node object (registered
 * with its own kubelet certificate). Returns an admin kubeconfig for `<clusterName>-admin`
 * (system:masters). The keyservice + joinservice start in {@link startServices}, which the init
 * flow calls once this node's disk is bound (docs/adr/0008-attestation-bound-node-identity.md).
 */
export class LocalClusterInitializer implements ClusterInitializer {
  #cp: RunningControlPlane | undefined;
  #services: ClusterServicesContext | undefined;

  constructor(
    private readonly o: {
      binaries: ControlPlaneBinaries;
      /** Folder for the control plane (pki/, admin.conf, etcd data, logs). */
      dir: string;
      services: ClusterServices;
      logger: Logger;
      apiServerPort?: number;
    },
  ) {}

  async initCluster(req: InitClusterRequest): Promise<Buffer> {
    const log = this.o.logger;
    const nodeName = req.node.name;
    const nodeIp = req.node.ip || '127.0.0.1';
    const sans = req.apiServerCertSans.filter((s) => s !== '');
    log.info('starting local control plane', { nodeName, nodeIp });
    const cp = await startControlPlane({
      binaries: this.o.binaries,
      dir: this.o.dir,
      host: nodeIp,
      apiServerPort: this.o.apiServerPort ?? 6443,
      apiServerIps: ['127.0.0.1', ...sans.filter((s) => isIP(s) !== 0)],
      ...(req.serviceCidr ? { serviceCidr: req.serviceCidr } : {}),
      progress: (line) => log.info(line),
    });
    this.#cp = cp;
    log.info('control plane ready', { server: cp.server, startupMs: cp.startupMs });
    const admin = new k8s.KubeConfig();
    admin.loadFromString(cp.adminKubeconfig);
    await setUpBootstrapTokenAccess(admin, { server: cp.server, caPem: cp.pki.ca.certPem });

    await setUpClusterObjects(admin, { components: req.components, kubernetesVersion: req.kubernetesVersion });

    // This node registers like every other: with its own kubelet certificate from the cluster CA.
    const kubelet = await createLeaf(cp.pki.ca, { commonName: `system:node:${nodeName}`, organizations: ['system:nodes'], usage: 'both', ips: [nodeIp] });
    await registerNode(kubeConfigFor(cp.server, cp.pki.ca.certPem, { certPem: kubelet.certPem, keyPem: kubelet.keyPem }), { name: nodeName, ip: nodeIp, providerId: req.node.providerId });
    await admin.makeApiClient(k8s.CoreV1Api).patchNode(
      { name: nodeName, body: [{ op: 'add', path: '/metadata/labels/node-role.kubernetes.io~1control-plane', value: '' }] },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
    );

    const clusterConfigurationPath = join(this.o.dir, 'ClusterConfiguration');
    await writeFile(clusterConfigurationPath, `apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nclusterName: ${req.clusterName}\napiServer:\n  certSANs: ${JSON.stringify(['127.0.0.1', nodeIp, ...sans])}\n`, { mode: 0o600 });
    if (req.serviceSecrets) {
      this.#services = { kubernetesDir: this.o.dir, adminKubeconfigPath: cp.adminKubeconfigPath, apiServerEndpoint: `${nodeIp}:${cp.port}`, nodeIp, secrets: req.serviceSecrets, clusterConfigurationPath };
    } else {
      log.warn('no service secrets in the init request: keyservice and joinservice will not be started');
    }

    const user = await createLeaf(cp.pki.ca, { commonName: `${req.clusterName}-admin`, organizations: ['system:masters'], usage: 'client' });
    return Buffer.from(buildKubeconfig({ server: cp.server, caPem: cp.pki.ca.certPem, clusterName: req.clusterName, userName: `${req.clusterName}-admin`, clientCertPem: user.certPem, clientKeyPem: user.keyPem }));
  }

  /** Starts the keyservice and joinservice of the cluster {@link initCluster} created (nothing without service secrets). */
  async startServices(): Promise<void> {
    if (this.#services) await this.o.services.start(this.#services);
  }

  /** Whether this node runs the control plane and the cluster services (it initialised the cluster). */
  get supervising(): boolean {
    return this.#cp !== undefined;
  }

  /** Stops the services and the control plane (node shutdown). */
  async stop(): Promise<void> {
    await this.o.services.stop();
    await this.#cp?.stop();
  }
}

/**
 * The `local` backend's join: kubeadm-style discovery (cluster-info JWS verified with the
 * bootstrap token, CA pinned by the ticket's hash), authentication with the bootstrap token
 * (must map to `system:bootstrap:<id>`), then Node registration with the issued kubelet
 * certificate.
 */
export class LocalClusterJoiner implements ClusterJoiner {
  constructor(
    private readonly logger: Logger,
    /** Overrides the ticket's endpoint (the reference uses the load balancer). */
    private readonly apiServerEndpoint?: () => Promise<string | undefined>,
  ) {}

  async joinCluster(req: JoinClusterRequest, signal?: AbortSignal): Promise<void> {
    const endpoint = (await this.apiServerEndpoint?.()) || req.apiServerEndpoint;
    const discovered = await discoverCluster(endpoint, req.token, req.caCertHashes, signal ? { signal } : {});
    const id = req.token.split('.')[0];
    const me = await whoAmI(kubeConfigFor(discovered.server, discovered.caPem, { token: req.token }));
    if (me.username !== `system:bootstrap:${id}`) throw new Error(`bootstrap token authenticated as "${me.username}", want system:bootstrap:${id}`);
    const nodeName = k8sCompliantHostname(req.nodeName);
    await registerNode(kubeConfigFor(discovered.server, discovered.caPem, { certPem: req.kubeletCertPem.toString('utf8'), keyPem: req.kubeletKeyPem }), { name: nodeName, ip: req.nodeIp });
    this.logger.info('node registered', { nodeName, server: discovered.server, role: req.role, ...(req.joinId ? { joinId: req.joinId } : {}) });
  }
}
