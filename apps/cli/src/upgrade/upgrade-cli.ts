/**
 * `asterism upgrade plan|apply` (docs/protocol/upgrade.md): what an upgrade of the running cluster
 * to the next Kubernetes version would do and whether it may start; and the rollout itself.
 */
import { parseArgs } from 'node:util';
import { supportedKubernetesVersions } from '@asterism/versions';
import { loadCliConfig } from '../config/cli-config.js';
import { attestationConfig } from '../config/attestation-flags.js';
import { DEFAULT_CHART_DIR } from '../init/chart-location.js';
import { spawnHelm } from '../init/deploy-services.js';
import { CLUSTER_FLAG_OPTIONS, CLUSTER_FLAGS_USAGE, clusterClients, clusterIdOf } from '../nodes/cluster-access.js';
import type { CommandOutput } from '../nodes/node-cli.js';
import { buildCliValidator } from '../validators/cli-validator.js';
import { validatorOptions, VALIDATOR_FLAG_OPTIONS } from '../validators/validator-flags.js';
import { EXIT, seconds, UsageError } from '../usage.js';
import { adminIdentityOf, AtlsUpgradeAgents } from './agent-client.js';
import { readClusterFacts } from './cluster-facts.js';
import { markedNodeConfig } from './marked-node-config.js';
import { planReady, planUpgrade, renderPlan, type ClusterFacts } from './plan.js';
import { applyUpgrade, UpgradeApplyError } from './rollout.js';
import { clusterRolloutDeps } from './rollout-deps.js';
import { upgradeServices } from './services-upgrade.js';

/** Help of `asterism upgrade`. */
export const UPGRADE_USAGE = `Usage: asterism upgrade plan [--kubernetes-version <v>] [--json] [flags]
       asterism upgrade apply --kubernetes-version <v> [flags]

plan: the cluster's Kubernetes version, the versions it may move to (one minor at a time, patch
upgrades any time, only versions this CLI can install from hash-checked artifacts), the order the
nodes would be upgraded in and what changes on each, and the checks that must pass first: every
node Ready and on the cluster version, etcd healthy on every control plane, no node mid-join.
Exit 0 when the upgrade may start, 1 when a check fails.

apply: refuses unless plan's checks pass; then points the NodeVersion at the target's components
(nodes joining later install the target), stages the target's images on every node, and upgrades
one node at a time in plan order through its upgrade agent (aTLS, docs/adr/0042-upgrade-agent.md):
cordon, drain, kubeadm upgrade apply (first control plane) or kubeadm upgrade node, kubelet and
kubectl from hash-checked artifacts, Ready on the new kubelet, uncordon; then the services with
Helm. A failed step restores that node (it stays Ready on the old version) and stops the rollout
(exit 1). Re-run after an interruption: it continues; a second run changes nothing.

Flags:
  --kubernetes-version <v>      the target (plan: default the newest version one step away)
  --json                        plan: print the plan as JSON
  --artifact-base-url <url>     apply: where nodes fetch the target's components (default: the
                                config's artifactBaseURL)
  --variant, --attestation-config, --config
                                apply: the nodes' attestation (as for init): each agent must attest
  --cluster-id <id>             apply: the cluster ID the nodes are marked with (default:
                                asterism-id.json in the workspace)
  --agent-port <n>              apply: the nodes' upgrade agent port (default 9777)
  --drain-timeout <seconds>     apply: per node (default 300)
  --skip-helm                   apply: do not upgrade the services' Helm release
  --skip-helm-wait              apply: do not wait for the services' pods
  --helm <path>                 helm binary (default $HELM, else "helm" on PATH)
${CLUSTER_FLAGS_USAGE}`;

const OPTIONS = {
  ...CLUSTER_FLAG_OPTIONS,
  ...VALIDATOR_FLAG_OPTIONS,
  'kubernetes-version': { type: 'string' },
  json: { type: 'boolean' },
  'artifact-base-url': { type: 'string' },
  'agent-port': { type: 'string' },
  'cluster-id': { type: 'string' },
  'drain-timeout': { type: 'string' },
  'skip-helm': { type: 'boolean' },
  'skip-helm-wait': { type: 'boolean' },
  helm: { type: 'string' },
} as const;

type Values = ReturnType<typeof parseArgs<{ args: string[]; strict: true; allowPositionals: true; options: typeof OPTIONS }>>['values'];

/** `asterism upgrade <action>`; `factsOf` reads the cluster (tests inject their own). */
export async function upgradeCommand(argv: string[], out: CommandOutput, factsOf: (values: { kubeconfig?: string; workspace?: string }) => Promise<ClusterFacts> = (v) => readClusterFacts(clusterClients(v))): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, strict: true, allowPositionals: true, options: OPTIONS });
  if (values.help) return out.stdout(`${UPGRADE_USAGE}\n`), EXIT.ok;
  const [action, ...extra] = positionals;
  if ((action !== 'plan' && action !== 'apply') || extra.length > 0) throw new UsageError(action === undefined ? 'want: asterism upgrade plan|apply' : `unknown upgrade action "${[action, ...extra].join(' ')}" (want: plan or apply)`);
  if (action === 'apply') return applyCommand(values, out);
  const plan = planUpgrade(await factsOf(values), supportedKubernetesVersions(), values['kubernetes-version'] ?? '');
  out.stdout(`${values.json ? JSON.stringify(plan, null, 2) : renderPlan(plan)}\n`);
  return planReady(plan) ? EXIT.ok : EXIT.refused;
}

/** `upgrade apply`: flags -> validator, admin identity, agents -> the rollout. */
async function applyCommand(values: Values, out: CommandOutput): Promise<number> {
  const target = values['kubernetes-version'];
  if (!target) throw new UsageError('apply needs --kubernetes-version <v> (see asterism upgrade plan)');
  const file = await loadCliConfig(values.config);
  const artifactBase = values['artifact-base-url'] ?? file.artifactBaseURL;
  if (!artifactBase) throw new UsageError('apply needs --artifact-base-url (or artifactBaseURL in the config): the nodes fetch the target\'s components from there');
  const kubeconfigPath = values.kubeconfig ?? process.env.KUBECONFIG ?? `${values.workspace ?? '.'}/asterism-admin.conf`;
  const att = await attestationConfig(values, file);
  // The nodes carry the cluster's mark in PCR 15 (RTMR2): asterism-id.json or --cluster-id.
  const v = await buildCliValidator(markedNodeConfig(att, await clusterIdOf(values)), validatorOptions(values));
  const agents = new AtlsUpgradeAgents(v.validator, adminIdentityOf(kubeconfigPath), Number(values['agent-port'] ?? 9777));
  const helm = spawnHelm(values.helm ?? process.env.HELM ?? 'helm', 660_000);
  const say = (l: string) => out.stdout(`${l}\n`);
  try {
    await applyUpgrade(
      clusterRolloutDeps({
        clients: clusterClients(values),
        agents,
        target,
        artifactBase,
        supported: supportedKubernetesVersions(),
        say,
        drainTimeoutMs: seconds(values['drain-timeout'], 300) * 1000,
        stepTimeoutMs: 20 * 60_000,
        upgradeServices: values['skip-helm']
          ? async () => 'services: --skip-helm, the Helm release was left as it is'
          : (from, to) => upgradeServices({ helm, chartDir: DEFAULT_CHART_DIR, kubeconfigPath, wait: !values['skip-helm-wait'], timeoutSeconds: 600 }, from, to),
      }),
      target,
    );
    return EXIT.ok;
  } catch (err) {
    if (!(err instanceof UpgradeApplyError)) throw err;
    out.stderr(`asterism upgrade apply: ${err.code}: ${err.message}\n`);
    return EXIT.refused;
  } finally {
    await v.close();
  }
}
