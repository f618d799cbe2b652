import { stringify } from 'yaml';

/** Paths and constants of a kubeadm-managed node (docs/protocol/constants.md, docs/protocol/kubernetes.md). */
export const KUBEADM = {
  criSocket: 'unix:///run/containerd/containerd.sock',
  patchesDir: '/opt/kubernetes/patches',
  auditPolicy: '/etc/kubernetes/audit-policy.yaml',
  auditLogDir: '/var/log/kubernetes/audit/',
  caCert: '/etc/kubernetes/pki/ca.crt',
  manifests: '/etc/kubernetes/manifests',
  kubeletCert: '/run/state/kubelet/pki/kubelet-client-crt.pem',
  kubeletKey: '/run/state/kubelet/pki/kubelet-client-key.pem',
  bindPort: 6443,
} as const;

/** TLS cipher suites for the kubelet (CIS benchmark list). */
const CIS_CIPHERS = [
  'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305',
  'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305',
  'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
  'TLS_RSA_WITH_AES_256_GCM_SHA384',
  'TLS_RSA_WITH_AES_128_GCM_SHA256',
];

/** Inputs of the first control plane's kubeadm configuration. */
export interface InitConfigInput {
  kubernetesVersion: string;
  clusterName: string;
  nodeName: string;
  nodeIp: string;
  providerId: string;
  /** Load balancer host; becomes controlPlaneEndpoint when non-empty. */
  controlPlaneHost: string;
  certSans: string[];
  serviceCidr: string;
  /** `external` on clouds with a cloud controller manager. */
  cloudProvider: string;
  /** Registry prefix of the control-plane images (kubeadm `imageRepository`); empty = kubeadm's default. */
  imageRepository?: string;
  /** Preflight checks reported as warnings instead of errors (`nodeRegistration.ignorePreflightErrors`). */
  ignorePreflightErrors?: string[];
  /**
   * kube-proxy's `conntrack.maxPerCore` (conformance mode deploys kube-proxy); 0 keeps the kernel's
   * limit, which a node in a network namespace cannot raise. Unset = kube-proxy's default.
   */
  kubeProxyConntrackMaxPerCore?: number;
}

/** Inputs of a joining node's kubeadm configuration. */
export interface JoinConfigInput {
  apiServerEndpoint: string;
  token: string;
  caCertHashes: string[];
  nodeName: string;
  nodeIp: string;
  providerId: string;
  controlPlane: boolean;
  cloudProvider: string;
  ignorePreflightErrors?: string[];
}

function minor(version: string): number {
  const m = /^v?1\.(\d+)/.exec(version);
  return m ? Number(m[1]) : 0;
}

function kubeletConfiguration(providerId: string): Record<string, unknown> {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    protectKernelDefaults: true,
    tlsCipherSuites: CIS_CIPHERS,
    staticPodPath: KUBEADM.manifests,
    registerWithTaints: [
      { key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'PreferNoSchedule' },
      { key: 'node.cilium.io/agent-not-ready', value: 'true', effect: 'PreferNoSchedule' },
    ],
    tlsCertFile: KUBEADM.kubeletCert,
    tlsPrivateKeyFile: KUBEADM.kubeletKey,
    ...(providerId ? { providerID: providerId } : {}),
  };
}

/** `nodeRegistration` of both configurations. */
function nodeRegistration(nodeName: string, args: Array<{ name: string; value: string }>, ignore: string[] | undefined): Record<string, unknown> {
  return { name: nodeName, criSocket: KUBEADM.criSocket, kubeletExtraArgs: args, ...(ignore?.length ? { ignorePreflightErrors: ignore } : {}) };
}

const kubeletArgs = (cloudProvider: string, nodeIp: string, providerId: string) =>
  [
    { name: 'cloud-provider', value: cloudProvider },
    { name: 'node-ip', value: nodeIp },
    { name: 'provider-id', value: providerId },
  ].filter((a) => a.value !== '');

/**
 * The multi-document kubeadm configuration for `kubeadm init` (v1beta4 API, Kubernetes >= 1.31):
 * InitConfiguration, ClusterConfiguration and KubeletConfiguration as docs/protocol/kubernetes.md lists them.
 */
export function initConfiguration(input: InitConfigInput): string {
  const sans = ['127.0.0.1', input.nodeIp, ...input.certSans].filter((s) => s !== '');
  const initCfg = {
    apiVersion: 'kubeadm.k8s.io/v1beta4',
    kind: 'InitConfiguration',
    nodeRegistration: nodeRegistration(input.nodeName, kubeletArgs(input.cloudProvider, input.nodeIp, input.providerId), input.ignorePreflightErrors),
    localAPIEndpoint: { bindPort: KUBEADM.bindPort, ...(input.nodeIp ? { advertiseAddress: input.nodeIp } : {}) },
    patches: { directory: KUBEADM.patchesDir },
  };
  const clusterCfg = {
    apiVersion: 'kubeadm.k8s.io/v1beta4',
    kind: 'ClusterConfiguration',
    kubernetesVersion: input.kubernetesVersion,
    clusterName: input.clusterName,
    ...(input.imageRepository ? { imageRepository: input.imageRepository } : {}),
    ...(input.controlPlaneHost ? { controlPlaneEndpoint: input.controlPlaneHost } : {}),
    ...(input.serviceCidr ? { networking: { serviceSubnet: input.serviceCidr } } : {}),
    apiServer: {
      certSANs: [...new Set(sans)],
      extraArgs: [
        { name: 'audit-policy-file', value: KUBEADM.auditPolicy },
        { name: 'audit-log-path', value: `${KUBEADM.auditLogDir}audit.log` },
        { name: 'audit-log-maxage', value: '30' },
        { name: 'audit-log-maxbackup', value: '10' },
        { name: 'audit-log-maxsize', value: '100' },
        { name: 'profiling', value: 'false' },
        { name: 'kubelet-certificate-authority', value: KUBEADM.caCert },
      ],
      extraVolumes: [
        { name: 'audit', hostPath: KUBEADM.auditPolicy, mountPath: KUBEADM.auditPolicy, readOnly: true, pathType: 'File' },
        { name: 'audit-log', hostPath: KUBEADM.auditLogDir, mountPath: KUBEADM.auditLogDir, readOnly: false, pathType: 'DirectoryOrCreate' },
      ],
    },
    controllerManager: {
      extraArgs: [
        { name: 'flex-volume-plugin-dir', value: '/opt/libexec/kubernetes/kubelet-plugins/volume/exec/' },
        ...(input.cloudProvider ? [{ name: 'cloud-provider', value: input.cloudProvider }] : []),
        { name: 'configure-cloud-routes', value: 'false' },
        { name: 'profiling', value: 'false' },
        { name: 'terminated-pod-gc-threshold', value: '1000' },
      ],
    },
    scheduler: { extraArgs: [{ name: 'profiling', value: 'false' }] },
    ...(minor(input.kubernetesVersion) >= 31 ? { featureGates: { ControlPlaneKubeletLocalMode: true } } : {}),
  };
  const kubeProxy =
    input.kubeProxyConntrackMaxPerCore === undefined
      ? []
      : [{ apiVersion: 'kubeproxy.config.k8s.io/v1alpha1', kind: 'KubeProxyConfiguration', conntrack: { maxPerCore: input.kubeProxyConntrackMaxPerCore } }];
  return [initCfg, clusterCfg, kubeletConfiguration(input.providerId), ...kubeProxy].map((d) => stringify(d)).join('---\n');
}

/** The kubeadm configuration for `kubeadm join` (bootstrap-token discovery). */
export function joinConfiguration(input: JoinConfigInput): string {
  const joinCfg = {
    apiVersion: 'kubeadm.k8s.io/v1beta4',
    kind: 'JoinConfiguration',
    nodeRegistration: nodeRegistration(input.nodeName, kubeletArgs(input.cloudProvider, input.nodeIp, input.providerId), input.ignorePreflightErrors),
    discovery: { bootstrapToken: { apiServerEndpoint: input.apiServerEndpoint, token: input.token, caCertHashes: input.caCertHashes } },
    patches: { directory: KUBEADM.patchesDir },
    ...(input.controlPlane ? { controlPlane: { localAPIEndpoint: { advertiseAddress: input.nodeIp, bindPort: KUBEADM.bindPort } }, skipPhases: ['control-plane-prepare/download-certs'] } : {}),
  };
  return [joinCfg, kubeletConfiguration(input.providerId)].map((d) => stringify(d)).join('---\n');
}

/** `cloud-provider` kubelet flag value: `external` on AWS/Azure/GCP for init; join only on Azure/GCP (reference quirk kept). */
export function cloudProviderFlag(csp: string, phase: 'init' | 'join'): string {
  const c = csp.toLowerCase();
  if (phase === 'init') return ['aws', 'azure', 'gcp'].includes(c) ? 'external' : '';
  return ['azure', 'gcp'].includes(c) ? 'external' : '';
}
