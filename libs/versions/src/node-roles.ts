/**
 * Which components a worker skips (docs/protocol/components.md, "Image components"): the
 * control plane's static pods and the services the charts pin to control planes
 * (`node-role.kubernetes.io/control-plane`), and kubectl (nothing on a worker runs it: kubeadm
 * join and the kubelet do not). A worker never runs them, so installing them only costs it
 * download, hashing and disk writes (on a TCG VM, with its dm-integrity state disk, kubectl alone
 * cost ~45 s). The reference's workers never hold the images (they pull on demand).
 */
import { parseImageInstallPath } from './image-path.js';
import { INSTALL_PATHS } from './install-paths.js';

/** Repository names (last path segment) of the images only control planes run. */
export const CONTROL_PLANE_ONLY_IMAGES: readonly string[] = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'joinservice', 'keyservice', 'attestation-monitor'];

/** Install paths of the files only control planes need. */
export const CONTROL_PLANE_ONLY_FILES: readonly string[] = [`${INSTALL_PATHS.bin}/kubectl`];

/** Whether a component (by its install path) is an image only control planes need. */
export function isControlPlaneOnlyImage(installPath: string): boolean {
  const target = parseImageInstallPath(installPath);
  if (typeof target === 'string') return false;
  const repository = target.ref.slice(0, target.ref.lastIndexOf(':'));
  return CONTROL_PLANE_ONLY_IMAGES.includes(repository.slice(repository.lastIndexOf('/') + 1));
}

/** The components a node of `role` installs: a worker leaves out the control-plane-only images and files. */
export function componentsForRole<T extends { installPath: string }>(list: readonly T[], role: 'ControlPlane' | 'Worker'): T[] {
  if (role === 'ControlPlane') return [...list];
  return list.filter((c) => !isControlPlaneOnlyImage(c.installPath) && !CONTROL_PLANE_ONLY_FILES.includes(c.installPath));
}
