/**
 * Runs the VM worker scenario's checks (./e2e/vm-checks.ts, docs/adr/0039-vm-nodes-local-cluster.md)
 * against a running `up --backend kubeadm --vm-workers 1` cluster whose vm-worker-0 is Ready,
 * without the rest of the suite: the image's kernel and containerd in `kubectl get nodes -o wide`,
 * the marker only on the mapped device, a reboot that rejoins, a second VM with a changed
 * command line refused, a full outage of every node recovered with `asterism recover` (the VM
 * first). The attestation monitor's grace is raised first (a VM's verification pod is away while
 * it reboots).
 * Usage: node --import tsx tools/local-cluster/src/real/vm-scenarios-cli.ts
 *          [kernel] [marker] [reboot] [tamper] [outage] [--dir .local-cluster]   (default: all, in this order)
 */
import { join } from 'node:path';
import { readState } from '../cluster.js';
import { setMonitorTiming } from './e2e/attestation-support.js';
import { RealClusterContext } from './e2e/context.js';
import { fullOutageRecovered, markerOnlyOnMappedDevice, rebootRejoins, tamperedVmRefused, vmRunsImageKernel, writeMarker } from './e2e/vm-checks.js';

const dirIdx = process.argv.indexOf('--dir');
const root = dirIdx > 0 ? process.argv[dirIdx + 1]! : join(process.cwd(), '.local-cluster');
const picked = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && all[i - 1] !== '--dir');
const ctx = new RealClusterContext(root, (l) => process.stdout.write(`[vm] ${l}\n`));
const state = await readState(ctx.layout);
if (!state || state.backend !== 'kubeadm') throw new Error(`no kubeadm-backend cluster in ${root}`);
setMonitorTiming(ctx, 20, 3600);
let marker: string | undefined;
const scenarios: Record<string, () => Promise<void>> = {
  kernel: async () => void vmRunsImageKernel(ctx),
  marker: async () => void (marker = await markerOnlyOnMappedDevice(ctx)),
  reboot: async () => void (await rebootRejoins(ctx, marker ?? (marker = await writeMarker(ctx)))),
  tamper: async () => void (await tamperedVmRefused(ctx)),
  outage: async () => void (await fullOutageRecovered(ctx, marker ?? (marker = await writeMarker(ctx)))),
};
for (const name of picked.length > 0 ? picked : Object.keys(scenarios)) {
  const run = scenarios[name];
  if (!run) throw new Error(`unknown scenario ${name}: want ${Object.keys(scenarios).join(', ')}`);
  const started = Date.now();
  await run();
  process.stdout.write(`[vm] scenario ${name} passed in ${((Date.now() - started) / 1000).toFixed(1)} s (load ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')})\n`);
}
process.exit(0);
