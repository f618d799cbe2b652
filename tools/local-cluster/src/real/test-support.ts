/**
 * What the real-node integration specs share: whether this machine can run real nodes
 * (tools/k8s-testenv binaries, the node-runtime host tools, root; under CI=true a missing piece
 * fails the suite instead of skipping it, `missingComponent`), and finding a node's processes.
 */
import { readFileSync } from 'node:fs';
import { testenvUnavailable } from '@asterism/k8s-testenv';
import { missingComponent } from '@asterism/testing';
import { nodePids } from './cgroups.js';
import { checkHostTools } from './real-cluster.js';

function hostToolsMissing(): string | false {
  try {
    checkHostTools();
    return process.getuid?.() === 0 ? false : missingComponent('root', 'run as root (namespaces, cgroups, mounts)');
  } catch (err) {
    return missingComponent((err as Error).message, 'bash tools/scripts/setup.sh');
  }
}

/** The `skip` option of a real-node suite: false when it can run, else the reason. */
export function realNodesUnavailable(): string | false {
  return testenvUnavailable() || hostToolsMissing();
}

/** A process of a real node (found through the node's cgroups) and its arguments. */
export interface NodeProcess {
  pid: number;
  args: string[];
}

/** The processes of `node` whose command line matches `match` (processes that end meanwhile are left out). */
export function nodeProcesses(node: string, match: (args: string[]) => boolean): NodeProcess[] {
  const found: NodeProcess[] = [];
  for (const pid of nodePids(node)) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (match(args)) found.push({ pid, args });
    } catch {
      /* gone */
    }
  }
  return found;
}

/**
 * Whether a command line is a node's bootstrapper: Node running the workspace entry point (node.sh
 * and its subshells carry the same command line as their arguments, so the program must be node).
 */
export const isBootstrapper = (args: string[]): boolean => /(^|\/)node$/.test(args[0] ?? '') && args.some((a) => a.endsWith('apps/bootstrapper/src/main.ts'));

/** Whether a command line is the verification-service pod's process (the image's entry point). */
export const isVerificationService = (args: string[]): boolean => args.includes('/app/main.mjs') && args.some((a) => a.startsWith('--attestation-variant=')) && args.some((a) => a.startsWith('--http-port='));

/** Resident set of a process in MiB (VmRSS). */
export function residentMiB(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
}
