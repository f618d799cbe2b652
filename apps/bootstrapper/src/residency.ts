import type { RunResult } from './run.js';

/** What decides whether the bootstrapper process stays after bootstrapping. */
export interface ResidencyFacts {
  backend: 'kubeadm' | 'local';
  result: RunResult;
  /** The local backend's init node runs the control plane, keyservice and joinservice as children. */
  supervisesControlPlane: boolean;
  /** Local backend: the verification service port (0 = off); it stands in for the chart's per-node pod. */
  verificationPort: number;
  /** Local backend: a verification-service program (`--local-apps`) can serve it instead of this process. */
  verificationProgram?: boolean;
}

/** Why the process must stay, if it must. */
export type ResidencyReason = 'control-plane services' | 'verification service';

/**
 * The bootstrapper stops once its node is bootstrapped (joined, rejoined, initialised), except
 * where it supervises local services: on the local backend the init node's control plane and
 * services are its children, and every node serves the verification service unless that is off
 * or a verification-service program takes it over (then only the init node serves it itself).
 * On the kubeadm backend the init system (systemd, or tools/local-cluster's node.sh) runs the
 * kubelet and the cluster runs the services as pods, the verification service included (the
 * chart's DaemonSet, docs/adr/0028), so the process always ends.
 */
export function residencyReason(f: ResidencyFacts): ResidencyReason | undefined {
  if (f.result === 'stopped' || f.result === 'failed') return undefined;
  if (f.backend === 'kubeadm') return undefined;
  if (f.supervisesControlPlane) return 'control-plane services';
  if (f.verificationPort !== 0 && !f.verificationProgram) return 'verification service';
  return undefined;
}

/**
 * Whether the exiting bootstrapper first starts the verification-service program
 * (verify/hand-over.ts): local backend, verification on, a program given, nothing else to stay for.
 * The init node keeps serving it itself: it stays for its control plane anyway.
 */
export function handsOverVerification(f: ResidencyFacts): boolean {
  return f.backend === 'local' && residencyReason(f) === undefined && f.result !== 'stopped' && f.result !== 'failed' && f.verificationPort !== 0 && f.verificationProgram === true;
}
