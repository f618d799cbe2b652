import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ControlPlaneBinaries } from '@asterism/k8s-controlplane';

/** The Kubernetes version the Go module under tools/k8s-testenv/go pins. */
export const K8S_VERSION = 'v1.34.4';

/** Folder with the built binaries (`K8S_TESTENV_BIN` overrides). */
export function binDir(): string {
  const cacheRoot = process.env.K8S_TESTENV_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'asterism', 'k8s-testenv');
  return process.env.K8S_TESTENV_BIN ?? join(cacheRoot, K8S_VERSION, 'bin');
}

/** Missing binaries, by name (empty when everything is built). */
export function missingBinaries(dir = binDir()): string[] {
  return ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kubeadm'].filter((b) => {
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
