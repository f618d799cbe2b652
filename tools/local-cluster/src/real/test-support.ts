/**
 * What the real-node integration specs share: whether this machine can run real nodes
 * (tools/k8s-testenv binaries, the node-runtime host tools, root). Under CI=true a missing
 * piece fails the suite instead of skipping it (`missingComponent`).
 */
import { testenvUnavailable } from '@asterism/k8s-testenv';
import { missingComponent } from '@asterism/testing';
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
