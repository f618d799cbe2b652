/**
 * `asterism upgrade plan` (docs/protocol/upgrade.md): what an upgrade of the running cluster to
 * the next Kubernetes version would do, and whether it may start.
 */
import { parseArgs } from 'node:util';
import { supportedKubernetesVersions } from '@asterism/versions';
import { CLUSTER_FLAG_OPTIONS, CLUSTER_FLAGS_USAGE, clusterClients } from '../nodes/cluster-access.js';
import type { CommandOutput } from '../nodes/node-cli.js';
import { EXIT, UsageError } from '../usage.js';
import { readClusterFacts } from './cluster-facts.js';
import { planReady, planUpgrade, renderPlan, type ClusterFacts } from './plan.js';

/** Help of `asterism upgrade`. */
export const UPGRADE_USAGE = `Usage: asterism upgrade plan [--kubernetes-version <v>] [--json] [flags]

plan: the cluster's Kubernetes version, the versions it may move to (one minor at a time, patch
upgrades any time, only versions this CLI can install from hash-checked artifacts), the order the
nodes would be upgraded in and what changes on each, and the checks that must pass first: every
node Ready and on the cluster version, etcd healthy on every control plane, no node mid-join.
Exit 0 when the upgrade may start, 1 when a check fails.

Flags:
  --kubernetes-version <v>      the target (default: the newest version one step away)
  --json                        print the plan as JSON
${CLUSTER_FLAGS_USAGE}`;

/** `asterism upgrade <action>`; `factsOf` reads the cluster (tests inject their own). */
export async function upgradeCommand(argv: string[], out: CommandOutput, factsOf: (values: { kubeconfig?: string; workspace?: string }) => Promise<ClusterFacts> = (v) => readClusterFacts(clusterClients(v))): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: { ...CLUSTER_FLAG_OPTIONS, 'kubernetes-version': { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) return out.stdout(`${UPGRADE_USAGE}\n`), EXIT.ok;
  const [action, ...extra] = positionals;
  if (action !== 'plan' || extra.length > 0) throw new UsageError(action === undefined ? 'want: asterism upgrade plan' : `unknown upgrade action "${[action, ...extra].join(' ')}" (want: plan)`);
  const plan = planUpgrade(await factsOf(values), supportedKubernetesVersions(), values['kubernetes-version'] ?? '');
  out.stdout(`${values.json ? JSON.stringify(plan, null, 2) : renderPlan(plan)}\n`);
  return planReady(plan) ? EXIT.ok : EXIT.refused;
}
