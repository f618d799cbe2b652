import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ControlPlaneBinaries } from '@asterism/k8s-controlplane';

/** The Kubernetes version the Go module under tools/k8s-testenv/go pins. */
export const K8S_VERSION = 'v1.34.4';

/** Name of the build-cache folder: version + recipe (static binaries, etcdctl, pause); scripts/build.sh uses the same. */
export const K8S_TESTENV_BUILD = `${K8S_VERSION}-static`;

/** The build cache root (`K8S_TESTENV_CACHE`, else `~/.cache/asterism/k8s-testenv`); scripts/build.sh uses the same. */
export function cacheRoot(): string {
  return process.env.K8S_TESTENV_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'asterism', 'k8s-testenv');
}

/** Folder with the built binaries of `version` (default: the pinned one; `K8S_TESTENV_BIN` overrides that one). */
export function binDir(version: string = K8S_VERSION): string {
  if (version === K8S_VERSION && process.env.K8S_TESTENV_BIN) return process.env.K8S_TESTENV_BIN;
  return join(cacheRoot(), `${version}-static`, 'bin');
}

/** Folder scripts/pack.sh fills: `<version>/<artifact>` for every packed version (served to local nodes). */
export function artifactsRoot(): string {
  return join(cacheRoot(), 'artifacts');
}

/** Missing binaries, by name (empty when everything is built). */
export function missingBinaries(dir = binDir()): string[] {
  return ['etcd', 'etcdctl', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kube-proxy', 'kubeadm', 'kubelet', 'pause'].filter((b) => {
    try {
      accessSync(join(dir, b), constants.X_OK);
      return false;
    } catch {
      return true;
    }
  });
}

/** Paths of the control-plane binaries; throws with the build command when they are missing. */
export function controlPlaneBinaries(dir = binDir()): ControlPlaneBinaries & { kubeadm: string } {
  const missing = missingBinaries(dir);
  if (missing.length > 0) {
    throw new Error(`Kubernetes binaries missing in ${dir}: ${missing.join(', ')}. Build them with: bash tools/k8s-testenv/scripts/build.sh`);
  }
  return {
    etcd: join(dir, 'etcd'),
    kubeApiserver: join(dir, 'kube-apiserver'),
    kubeControllerManager: join(dir, 'kube-controller-manager'),
    kubeadm: join(dir, 'kubeadm'),
  };
}
