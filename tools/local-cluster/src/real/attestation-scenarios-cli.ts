/**
 * Runs the continuous-attestation scenarios of the real-node suite (./e2e/attestation-checks.ts,
 * docs/protocol/continuous-attestation.md) against a running `up --backend kubeadm` cluster with
 * at least 2 control planes and the workers worker-0 and worker-1, without the rest of the suite.
 * The last scenario leaves a control plane quarantined (its PCR 9 stays extended until a reboot).
 * Usage: node --import tsx tools/local-cluster/src/real/attestation-scenarios-cli.ts
 *          [deny-list] [grace] [last-control-plane] [--dir .local-cluster] [--nodes a,b]   (default: all three)
 */
import { join } from 'node:path';
import { readState } from '../cluster.js';
import { RealClusterContext } from './e2e/context.js';
import { denyListRefusesQuarantinedWorker, lastControlPlaneNeverQuarantined, stoppedVerificationServiceGrace } from './e2e/attestation-checks.js';

const dirIdx = process.argv.indexOf('--dir');
const root = dirIdx > 0 ? process.argv[dirIdx + 1]! : join(process.cwd(), '.local-cluster');
const picked = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && all[i - 1] !== '--dir' && all[i - 1] !== '--nodes');
const ctx = new RealClusterContext(root, (l) => process.stdout.write(`[attestation] ${l}\n`));
const state = await readState(ctx.layout);
if (!state || state.backend !== 'kubeadm') throw new Error(`no kubeadm-backend cluster in ${root}`);
const nodesIdx = process.argv.indexOf('--nodes');
// --nodes: the nodes the grace scenario expects verified first (default: every Node).
const names = nodesIdx > 0 ? process.argv[nodesIdx + 1]!.split(',') : (await ctx.core.listNode()).items.map((n) => n.metadata!.name!);
const scenarios: Record<string, () => Promise<void>> = {
  'deny-list': () => denyListRefusesQuarantinedWorker(ctx),
  grace: () => stoppedVerificationServiceGrace(ctx, names),
  'last-control-plane': () => lastControlPlaneNeverQuarantined(ctx, names.filter((n) => n.startsWith('control-plane'))),
};
for (const name of picked.length > 0 ? picked : Object.keys(scenarios)) {
  const run = scenarios[name];
  if (!run) throw new Error(`unknown scenario ${name}: want ${Object.keys(scenarios).join(', ')}`);
  const started = Date.now();
  await run();
  process.stdout.write(`[attestation] scenario ${name} passed in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}
process.exit(0);
