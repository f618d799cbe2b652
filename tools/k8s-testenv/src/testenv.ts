import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { clientsFromConfig, kubeConfigFor, type KubeClients } from '@asterism/k8s';
import { setUpBootstrapTokenAccess, startControlPlane, type RunningControlPlane } from '@asterism/k8s-controlplane';
import { missingComponent } from '@asterism/testing';
import { controlPlaneBinaries, missingBinaries } from './binaries.js';

/** A control plane for one test file, with admin clients. */
export interface TestControlPlane extends RunningControlPlane {
  admin: KubeClients;
  kubeadm: string;
  /** A KubeConfig for arbitrary credentials against this API server. */
  kubeconfigFor(user: { token?: string; certPem?: string; keyPem?: string }): k8s.KubeConfig;
}

/** Skip reason (locally) when the binaries are not built; throws under CI=true. */
export function testenvUnavailable(): string | false {
  const missing = missingBinaries();
  return missing.length === 0 ? false : missingComponent(`Kubernetes binaries (${missing.join(', ')})`, 'bash tools/k8s-testenv/scripts/build.sh');
}

/**
 * Starts a real control plane in a temp folder with kubeadm-style bootstrap-token access set up.
 * Call `stop()` in an `after` hook; the processes are also killed if the test process exits.
 */
export async function startTestControlPlane(opts: { progress?: (l: string) => void } = {}): Promise<TestControlPlane> {
  const bins = controlPlaneBinaries();
  const dir = mkdtempSync(join(tmpdir(), 'k8s-testenv-'));
  const cp = await startControlPlane({ binaries: bins, dir, ...(opts.progress ? { progress: opts.progress } : {}) });
  const config = new k8s.KubeConfig();
  config.loadFromString(cp.adminKubeconfig);
  await setUpBootstrapTokenAccess(config, { server: cp.server, caPem: cp.pki.ca.certPem });
  const stop = async () => {
    await cp.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  return {
    ...cp,
    stop,
    admin: clientsFromConfig(config),
    kubeadm: bins.kubeadm,
    kubeconfigFor: (user) => kubeConfigFor(cp.server, cp.pki.ca.certPem, user),
  };
}
