/**
 * The files a real node's supervisor (`node/node.sh`) installs inside the node: containerd's
 * configuration, the pod network (CNI bridge + host-local from Debian's plugins), the kubelet
 * patch kubeadm applies from `/opt/kubernetes/patches`, and `node.env` (docs/adr/0019-node-runtime.md),
 * which also names the node's vTPM socket and its fixed path inside the node.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { nodeCgroupRoot } from './cgroups.js';
import type { NodeAddress } from './network.js';

/**
 * Where every real node sees its vTPM, whatever the node: node.sh bind-mounts the node's swtpm
 * socket (in the node's folder on the host) here in the node's mount namespace, as /dev/tpmrm0 is
 * one path on every VM, so the chart's verification-service DaemonSet can mount it with one
 * hostPath (docs/adr/0028).
 */
export const NODE_TPM_SOCKET = '/run/asterism/swtpm.sock';

/** What the supervisor of one node needs. */
export interface NodeConfigInput {
  node: NodeAddress;
  /** The node's swtpm data socket on the host (bind-mounted at {@link NODE_TPM_SOCKET}). */
  tpmSocket: string;
  /** Fully qualified pause image (CRI looks images up by full name). */
  sandboxImage: string;
  /** OCI archives to import into the node's containerd. */
  images: string[];
  cgroupDirs: string[];
}

/**
 * containerd 1.6 (Debian 12). `restrict_oom_score_adj`: root here lacks CAP_SYS_RESOURCE and may
 * not lower OOM scores; AppArmor is not available to containers; runc with cgroupfs because
 * the node has no systemd.
 */
export function containerdConfig(sandboxImage: string): string {
  return `version = 2
root = "/var/lib/containerd"
state = "/run/containerd"
[grpc]
  address = "/run/containerd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${sandboxImage}"
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/opt/cni/bin"
    conf_dir = "/etc/cni/net.d"
`;
}

/** A bridge network per node; the router namespace routes each node's pod subnet to it. */
export function cniConfig(podSubnet: string): string {
  return `${JSON.stringify(
    {
      cniVersion: '0.4.0',
      name: 'asterism',
      plugins: [
        {
          type: 'bridge',
          bridge: 'cni0',
          isGateway: true,
          ipMasq: true,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet: podSubnet }]], routes: [{ dst: '0.0.0.0/0' }] },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  )}\n`;
}

/**
 * Merged by kubeadm into the KubeletConfiguration the bootstrapper generates. Differences from a
 * VM, each forced by the node being a set of namespaces on a shared kernel: cgroupfs under the
 * node's own cgroup root; kernel defaults are the host's (the kubelet must not demand
 * `kernel.panic` and friends); swap may be on; eviction thresholds low because the disk and the
 * memory are the host's, shared by every node.
 */
export function kubeletPatch(node: string): string {
  return [
    'cgroupDriver: cgroupfs',
    `cgroupRoot: ${nodeCgroupRoot(node)}`,
    'protectKernelDefaults: false',
    'failSwapOn: false',
    // The hosts mount cgroups in hybrid (v1) mode; kubelet v1.35 stops there unless told not to.
    'failCgroupV1: false',
    'volumePluginDir: /opt/libexec/kubernetes/kubelet-plugins/volume/exec/',
    'imageGCHighThresholdPercent: 100',
    'evictionHard:',
    '  memory.available: "1Mi"',
    '  nodefs.available: "1%"',
    '  imagefs.available: "1%"',
    '',
  ].join('\n');
}

/** Writes `<node-dir>/config/*` for node.sh. */
export async function writeNodeConfig(nodeDir: string, input: NodeConfigInput): Promise<void> {
  const dir = join(nodeDir, 'config');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const env = {
    NODE_NAME: input.node.name,
    NODE_IP: input.node.ip,
    NODE_NETNS: input.node.namespace,
    NODE_CGROUPS: input.cgroupDirs.join(' '),
    NODE_IMAGES: input.images.join(' '),
    NODE_TPM_SOCKET: input.tpmSocket,
    NODE_TPM_AT: NODE_TPM_SOCKET,
  };
  for (const [k, v] of Object.entries(env)) if (/['\n]/.test(v)) throw new Error(`${k} contains a quote or newline: ${v}`);
  await writeFile(join(dir, 'node.env'), Object.entries(env).map(([k, v]) => `${k}='${v}'\n`).join(''), { mode: 0o600 });
  await writeFile(join(dir, 'containerd.toml'), containerdConfig(input.sandboxImage));
  await writeFile(join(dir, '10-asterism.conflist'), cniConfig(input.node.podSubnet));
  await writeFile(join(dir, 'kubeletconfiguration+merge.yaml'), kubeletPatch(input.node.name));
}
