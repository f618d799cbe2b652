import type { RunResult } from '@asterism/bootstrapper/runtime';

/** What decides whether a simulated node's bootstrapper process stays after bootstrapping. */
export interface ResidencyFacts {
  result: RunResult;
  /** The init node runs the control plane, keyservice and joinservice as children. */
  supervisesControlPlane: boolean;
  /** The verification service port (0 = off); it stands in for the chart's per-node pod. */
  verificationPort: number;
  /** A verification-service program (`--local-apps`) can serve it instead of this process. */
  verificationProgram?: boolean;
}

/** Why the process must stay, if it must. */
export type ResidencyReason = 'control-plane services' | 'verification service';

/**
 * A simulated node's bootstrapper stops once its node is bootstrapped (joined, rejoined,
 * initialised), except where it supervises local services: the init node's control plane and
 * services are its children, and every node serves the verification service unless that is off
 * or a verification-service program takes it over (then only the init node serves it itself).
 * (The kubeadm runtime always exits: the cluster runs the services as pods, docs/adr/0028.)
 */
export function residencyReason(f: ResidencyFacts): ResidencyReason | undefined {
  if (f.result === 'stopped' || f.result === 'failed') return undefined;
  if (f.supervisesControlPlane) return 'control-plane services';
  if (f.verificationPort !== 0 && !f.verificationProgram) return 'verification service';
  return undefined;
}

/**
 * Whether the exiting bootstrapper first starts the verification-service program (hand-over.ts):
 * verification on, a program given, nothing else to stay for. The init node keeps serving it
 * itself: it stays for its control plane anyway.
 */
export function handsOverVerification(f: ResidencyFacts): boolean {
  return residencyReason(f) === undefined && f.result !== 'stopped' && f.result !== 'failed' && f.verificationPort !== 0 && f.verificationProgram === true;
}
