/**
 * Which image components a worker skips (docs/protocol/components.md, "Image components"): the
 * control plane's static pods and the services the charts pin to control planes
 * (`node-role.kubernetes.io/control-plane`). A worker never runs them, so importing them only
 * costs it download, hashing and disk (on a VM: state-disk space, whose integrity wipe at first
 * boot grows with its size). The reference's workers never hold them either (they pull on demand).
 */
import { parseImageInstallPath } from './image-path.js';

/** Repository names (last path segment) of the images only control planes run. */
export const CONTROL_PLANE_ONLY_IMAGES: readonly string[] = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'joinservice', 'keyservice', 'attestation-monitor'];

/** Whether a component (by its install path) is an image only control planes need. */
export function isControlPlaneOnlyImage(installPath: string): boolean {
  const target = parseImageInstallPath(installPath);
  if (typeof target === 'string') return false;
  const repository = target.ref.slice(0, target.ref.lastIndexOf(':'));
  return CONTROL_PLANE_ONLY_IMAGES.includes(repository.slice(repository.lastIndexOf('/') + 1));
}

/** The components a node of `role` installs: a worker leaves out the control-plane-only images. */
export function componentsForRole<T extends { installPath: string }>(list: readonly T[], role: 'ControlPlane' | 'Worker'): T[] {
  return role === 'ControlPlane' ? [...list] : list.filter((c) => !isControlPlaneOnlyImage(c.installPath));
}
