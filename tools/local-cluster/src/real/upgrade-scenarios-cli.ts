/**
 * The upgrade scenarios (./e2e/upgrade-checks.ts) on a running real cluster created at the older
 * version with `up --upgrade-agent --kubernetes-version <from>`:
 *
 *   node --import tsx tools/local-cluster/src/real/upgrade-scenarios-cli.ts --dir <cluster> \
 *     --from v1.34.4 --to v1.35.4 [--faults] [--late-worker worker-late] [--published]
 *
 * Without --faults: one clean apply (its per-node and total times are printed). With --faults:
 * a target two minors ahead refused, a tampered kubeadm artifact, the CLI killed mid-rollout and
 * run again. Always: the probe Deployment and ConfigMap, a second apply that changes nothing.
 */
import { parseArgs } from 'node:util';
import { RealClusterContext } from './e2e/context.js';
import { applyUpgradeTo, lateWorkerRunsNewVersion, refusesTwoMinorsAhead, secondApplyChangesNothing, startAvailabilityProbe, tamperedKubeadmStopsRollout, timingsOf, workloadAndDataKept } from './e2e/upgrade-checks.js';
import { publishUpgradeTarget } from './upgrade-target.js';

const { values } = parseArgs({ options: { dir: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, faults: { type: 'boolean' }, 'late-worker': { type: 'string' }, 'first-node': { type: 'string' }, published: { type: 'boolean' } } });
if (!values.dir || !values.from || !values.to) throw new Error('want --dir <cluster> --from <v> --to <v>');
const ctx = new RealClusterContext(values.dir, (l) => process.stderr.write(`[upgrade] ${l}\n`));
const started = Date.now();
if (!values.published) await publishUpgradeTarget(values.to, ctx.log);
ctx.log(`target ${values.to} published (${((Date.now() - started) / 1000).toFixed(1)} s)`);
const probe = await startAvailabilityProbe(ctx);
if (values.faults) {
  await refusesTwoMinorsAhead(ctx, values.from);
  await tamperedKubeadmStopsRollout(ctx, values.from, values.to, values['first-node'] ?? 'control-plane-0');
}
const run = await applyUpgradeTo(ctx, values.to, { killMidRollout: values.faults ?? false });
const t = timingsOf(run.stdout);
ctx.log(`timings: ${Object.entries(t.nodes).map(([n, s]) => `${n} ${s.toFixed(1)} s`).join(', ')}; total ${t.total?.toFixed(1)} s`);
await workloadAndDataKept(ctx, probe);
await secondApplyChangesNothing(ctx, values.to);
if (values['late-worker']) await lateWorkerRunsNewVersion(ctx, values['late-worker'], values.to);
ctx.log('all upgrade scenarios passed');
process.exit(0);
