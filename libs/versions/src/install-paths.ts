/**
 * Where a node keeps what the bootstrapper installs (docs/protocol/kubernetes.md: the kubeadm
 * binary lives below /run/state/bin on the image). The generator of the manifest and the node's
 * installer both use these, so a row can never name a path the node does not expect.
 */
export const INSTALL_PATHS = {
  /** kubelet, kubeadm, kubectl, crictl. */
  bin: '/run/state/bin',
  /** CNI plugins (the folder containerd's CRI plugin searches by default). */
  cni: '/opt/cni/bin',
  /**
   * Not a folder on disk: an install path below it names a container image
   * (`<reference>@<digest>`) that the node imports into containerd (./image-path.ts).
   */
  images: '/run/state/images',
} as const;
