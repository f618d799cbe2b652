/**
 * Scenario: VM workers (docs/adr/0039-vm-nodes-local-cluster.md) in the real-node cluster. The
 * node image boots in QEMU (TCG) with a firmware-measured boot, attests to the joinservice pod
 * with the image's predicted PCRs, maps its dm-crypt + dm-integrity state disk, installs its
 * components, joins with kubeadm and runs a pod; a marker the pod writes is on the mapped device
 * and not in the raw disk image; a reboot rejoins (rejoin ticket for the same disk UUID, the
 * same key opens the header, the marker survives); in a full outage the VM is unlocked by
 * `asterism recover`; a VM booted from the image with a changed kernel command line is refused
 * naming the PCR.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { eventually, kubectlBinary, runCaptured, WORKSPACE_ROOT } from '@asterism/testing';
import { TSX } from '../../cluster.js';
import { rebootRealNodes } from '../faults.js';
import { NETWORK } from '../network.js';
import { vmPaths } from '../vm-node.js';
import { addVmWorker, powerCycleVmWorker, rebootVmWorker, removeVmWorker } from '../vm-workers.js';
import type { RealClusterContext } from './context.js';

/** The VM worker's name. */
export const VM_NODE = 'vm-worker-0';

/** The VM booted from the image with a changed kernel command line (refused, then removed). */
export const TAMPERED_VM = 'vm-worker-tampered';
/** QEMU start to Node Ready under TCG on 2 shared cores (minutes; the CI machine runs the rest beside it). */
const JOIN_TIMEOUT_MS = 30 * 60_000;

/** What joining measured (reported by the suite). */
export interface VmJoinTimes {
  bootToBootstrapperS: number;
  bootstrapperToReadyS: number;
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** `fn` for eventually(), pausing `ms` after each miss (kubectl and the API are not polled 4 times a second for minutes). */
function every<T>(ms: number, fn: () => Promise<T | undefined>): () => Promise<T | undefined> {
  return async () => {
    const v = await fn().catch(() => undefined);
    if (v === undefined) await new Promise((r) => setTimeout(r, ms));
    return v;
  };
}

/** Runs a pod on the VM from the verification-service image (the VM has it; node in it) and returns its log. */
async function runOnVm(ctx: RealClusterContext, name: string, script: string, opts: { device?: boolean } = {}): Promise<string> {
  const image = ctx.kubectl('-n', 'kube-system', 'get', 'daemonset', 'verification-service', '-o', 'jsonpath={.spec.template.spec.containers[0].image}');
  // /data: a folder on the state disk (below /var/lib/kubelet). With `device`, also the VM's /dev
  // whole at /host-dev (/dev/mapper/state is a symlink to ../dm-<n>), and privileged.
  const volumes = [{ name: 'd', hostPath: { path: '/var/lib/kubelet/asterism-e2e', type: 'DirectoryOrCreate' } }, ...(opts.device ? [{ name: 'dev', hostPath: { path: '/dev', type: 'Directory' } }] : [])];
  const mounts = [{ name: 'd', mountPath: '/data' }, ...(opts.device ? [{ name: 'dev', mountPath: '/host-dev' }] : [])];
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      nodeName: VM_NODE,
      restartPolicy: 'Never',
      containers: [{ name: 'c', image, imagePullPolicy: 'Never', command: ['/usr/bin/node', '-e', script], securityContext: { runAsUser: 0, privileged: opts.device ?? false }, volumeMounts: mounts }],
      volumes,
    },
  };
  const r = spawnSync(kubectlBinary(), ['--kubeconfig', ctx.layout.hostKubeconfig, 'apply', '-f', '-'], { input: JSON.stringify(pod), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const phase = await eventually(`pod ${name} finished`, every(2000, async () => {
    const p = ctx.kubectl('-n', 'default', 'get', 'pod', name, '-o', 'jsonpath={.status.phase}');
    return p === 'Succeeded' || p === 'Failed' ? p : undefined;
  }), 15 * 60_000);
  const log = ctx.kubectl('-n', 'default', 'logs', name);
  ctx.kubectl('-n', 'default', 'delete', 'pod', name, '--wait=false');
  assert.equal(phase, 'Succeeded', `pod ${name}: ${log}`);
  return log;
}

/** Whether `marker` occurs in the file (read in 8 MiB chunks with overlap). */
function fileContains(path: string, marker: Buffer): boolean {
  const fd = openSync(path, 'r');
  try {
    const chunk = Buffer.alloc(8 * 2 ** 20);
    let carry = Buffer.alloc(0);
    for (let pos = 0; ; ) {
      const n = readSync(fd, chunk, 0, chunk.length, pos);
      if (n === 0) return false;
      const view = Buffer.concat([carry, chunk.subarray(0, n)]);
      if (view.includes(marker)) return true;
      carry = view.subarray(Math.max(0, view.length - marker.length + 1));
      pos += n;
    }
  } finally {
    closeSync(fd);
  }
}

async function bootId(ctx: RealClusterContext): Promise<string | undefined> {
  return (await ctx.core.readNode({ name: VM_NODE }).catch(() => undefined))?.status?.nodeInfo?.bootID;
}

/** When (ms since the epoch) the node's console first shows `pattern`, polled each second. */
async function consoleShows(ctx: RealClusterContext, pattern: RegExp, timeoutMs: number, node = VM_NODE): Promise<number> {
  const path = vmPaths(ctx.layout, node).console;
  return eventually(`${node} console shows ${pattern}`, every(1000, async () => (existsSync(path) && pattern.test(readFileSync(path, 'latin1')) ? Date.now() : undefined)), timeoutMs);
}

function joinserviceLog(ctx: RealClusterContext): string[] {
  return ctx.kubectl('-n', 'kube-system', 'logs', '-l', 'k8s-app=join-service', '--tail=-1', '--prefix=false').split('\n');
}

/** Boots the VM worker (QEMU start); returns when it started. The cluster was prepared for VMs (up with vmReady). */
export async function bootVmWorker(ctx: RealClusterContext): Promise<number> {
  const started = Date.now();
  await addVmWorker(ctx.root, VM_NODE);
  return started;
}

/** Waits for the VM worker booted at `started` to join and be Ready; returns the times. */
export async function vmJoinsAndIsReady(ctx: RealClusterContext, started: number): Promise<VmJoinTimes> {
  const bootstrapperAt = await consoleShows(ctx, /"msg":"joining as"/, JOIN_TIMEOUT_MS);
  ctx.log(`${VM_NODE}: bootstrapper joining ${seconds(bootstrapperAt - started)} s after QEMU started`);
  await eventually(`${VM_NODE} Ready`, every(2000, async () => ((await ctx.ready(VM_NODE)) ? true : undefined)), JOIN_TIMEOUT_MS);
  const readyAt = Date.now();
  ctx.log(`${VM_NODE}: Ready ${seconds(readyAt - bootstrapperAt)} s later (${seconds(readyAt - started)} s after QEMU started)`);
  return { bootToBootstrapperS: seconds(bootstrapperAt - started), bootstrapperToReadyS: seconds(readyAt - bootstrapperAt) };
}

/** Removes the VM worker (Node object, QEMU, tap, lease). */
export async function removeVm(ctx: RealClusterContext, name = VM_NODE): Promise<void> {
  spawnSync(kubectlBinary(), ['--kubeconfig', ctx.layout.hostKubeconfig, 'delete', 'node', name, '--ignore-not-found', '--wait=false']);
  await removeVmWorker(ctx.root, name).catch((err: unknown) => ctx.log(`removing ${name}: ${(err as Error).message}`));
}

/** The QEMU process of the VM node (its entry's pid) from the cluster state. */
function qemuPid(ctx: RealClusterContext): number {
  const state = JSON.parse(readFileSync(ctx.layout.stateFile, 'utf8')) as { nodes: Array<{ name: string; bootstrapper: number }> };
  const pid = state.nodes.find((n) => n.name === VM_NODE)?.bootstrapper;
  if (!pid) throw new Error(`${VM_NODE} is not in the cluster state`);
  return pid;
}

/** `kubectl get nodes -o wide` shows the image's kernel and containerd; returns QEMU's RSS. */
export function vmRunsImageKernel(ctx: RealClusterContext): { qemuRssMiB: number } {
  const wide = ctx.kubectl('get', 'node', VM_NODE, '-o', 'wide');
  ctx.log(`kubectl get nodes -o wide:\n${wide}`);
  assert.match(wide, /cloud-amd64/, "the node runs the image's kernel");
  assert.match(wide, /containerd:\/\//);
  const qemuRssMiB = Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${qemuPid(ctx)}/status`, 'utf8'))?.[1] ?? 0) / 1024);
  ctx.log(`${VM_NODE}: QEMU RSS ${qemuRssMiB} MiB`);
  return { qemuRssMiB };
}

/** Size of the marker file: 16 MiB of the marker repeated, so a one-block sample per MiB of the device meets it (below). */
const MARKER_FILE_MIB = 16;

/** A script for a pod: writes 16 MiB of `marker` repeated to <dir>/marker, fsyncs, logs the guest's memory and "written". */
export function writeScript(marker: string, dir = '/data'): string {
  return [
    `{const fs=require('fs');const m=${JSON.stringify(marker)};const b=Buffer.from(m.repeat(Math.ceil(${2 ** 20}/m.length))).subarray(0,${2 ** 20});`,
    `const fd=fs.openSync(${JSON.stringify(`${dir}/marker`)},'w');for(let i=0;i<${MARKER_FILE_MIB};i++)fs.writeSync(fd,b);fs.fsyncSync(fd);fs.closeSync(fd);`,
    `console.log(fs.readFileSync('/proc/meminfo','utf8').split('\\n').filter((l)=>/^(MemTotal|MemFree|MemAvailable|Cached):/.test(l)).join('; '));console.log('written')}`,
  ].join('');
}

/**
 * A script for a privileged pod: looks for `marker` on the device (the VM's /dev/mapper/state), one 4 KiB read per
 * MiB. The marker file's 16 MiB lie in extents of at least 1 MiB on a fresh ext4 (one write,
 * delayed allocation), and any extent of 1 MiB or more starts a 4 KiB block at some multiple of
 * 1 MiB, which holds a whole copy of the marker (a full scan under TCG took 6 minutes).
 * Never-written sectors read as EIO since the fast format (docs/adr/0041): skipped, counted.
 */
export function scanScript(marker: string, device = '/host-dev/mapper/state'): string {
  return [
    `{const fs=require('fs');const m=Buffer.from(${JSON.stringify(marker)});const fd=fs.openSync(${JSON.stringify(device)},'r');`,
    `const b=Buffer.alloc(4096),t0=Date.now();let eio=0,hit=-1,samples=0;`,
    // A read at or past the device's end returns 0 bytes: the loop's end.
    `for(let p=0;hit<0;p+=${2 ** 20}){let n;samples++;try{n=fs.readSync(fd,b,0,4096,p)}catch(e){if(e.code!=='EIO')throw e;eio++;continue}if(n===0)break;const i=b.subarray(0,n).indexOf(m);if(i>=0)hit=p+i}`,
    `console.log(hit>=0?'found at '+hit+' ('+(Date.now()-t0)+' ms, '+eio+' unreadable of '+samples+' samples)':'absent from '+samples+' samples, '+eio+' unreadable')}`,
  ].join('');
}

const newMarker = () => `asterism-vm-marker-${randomBytes(12).toString('hex')}`;

/** A pod writes a fresh marker file onto the state disk (hostPath below /var/lib/kubelet) and logs the guest's memory; returns the marker. */
export async function writeMarker(ctx: RealClusterContext): Promise<string> {
  const marker = newMarker();
  const out = await runOnVm(ctx, 'vm-marker-write', writeScript(marker));
  assert.match(out, /written/);
  ctx.log(`${VM_NODE}: a pod wrote ${MARKER_FILE_MIB} MiB of the marker onto the state disk; guest memory: ${out.split('\n')[0]}`);
  return marker;
}

/**
 * One privileged pod writes a marker file onto the state disk (hostPath below /var/lib/kubelet,
 * a bind mount of it) and then finds the marker on the mapped device; the raw disk image on the
 * host holds no copy. Logs the guest's memory as the pod sees it (/proc/meminfo is the VM
 * kernel's). Returns the marker. (One pod, not two: a pod on the TCG VM takes 30-90 s.)
 */
export async function markerOnlyOnMappedDevice(ctx: RealClusterContext): Promise<string> {
  const marker = newMarker();
  const out = await runOnVm(ctx, 'vm-marker', writeScript(marker) + scanScript(marker), { device: true });
  assert.match(out, /written/);
  assert.match(out, /found at \d+/, 'the mapped device inside the VM holds the marker');
  // The pod's fsync put the marker's blocks through dm-crypt; QEMU's writes are in the host's page cache, which this read sees.
  const disk = vmPaths(ctx.layout, VM_NODE).stateDisk;
  assert.equal(fileContains(disk, Buffer.from(marker)), false, 'the raw state disk image holds no byte run of the marker');
  const [memory, , found] = out.trim().split('\n');
  ctx.log(`${VM_NODE}: a pod wrote ${MARKER_FILE_MIB} MiB of the marker (guest memory: ${memory}); marker ${found} on /dev/mapper/state inside the VM, absent from the raw image ${disk}`);
  return marker;
}

/**
 * Reboot (orderly: ACPI power button, the guest shuts down, QEMU starts again with the same disk
 * and vTPM state): the node rejoins with a rejoin ticket for the same disk UUID, the same key
 * opens the header, the marker is read back, and the components on the state disk are not
 * fetched again. Returns seconds from the power button to Ready.
 */
export async function rebootRejoins(ctx: RealClusterContext, marker: string): Promise<number> {
  const disk = vmPaths(ctx.layout, VM_NODE).stateDisk;
  const uuid = execFileSync('cryptsetup', ['luksUUID', disk], { encoding: 'utf8' }).trim().toLowerCase();
  // The pods' logs go back to their last start: a ticket for this disk before (a join, or a rejoin after a control plane's reboot).
  assert.ok(joinserviceLog(ctx).some((l) => /issuing (re)?join ticket/.test(l) && l.includes(uuid)), `a ticket for disk ${uuid} in the joinservice log`);
  assert.ok(ctx.opensDisk(VM_NODE, ctx.diskKey(VM_NODE)), "the cluster's key for the disk UUID opens the VM's LUKS header");
  const bootBefore = await bootId(ctx);
  const logBefore = new Set(joinserviceLog(ctx));
  const resetAt = Date.now();
  await rebootVmWorker(ctx.root, VM_NODE);
  ctx.log(`${VM_NODE}: powered off in order ${seconds(Date.now() - resetAt)} s after the power button, booting again`);
  await eventually(`${VM_NODE} Ready after the reboot`, every(2000, async () => {
    const id = await bootId(ctx);
    return id && id !== bootBefore && (await ctx.ready(VM_NODE)) ? true : undefined;
  }), JOIN_TIMEOUT_MS);
  const rebootToReadyS = seconds(Date.now() - resetAt);
  ctx.log(`${VM_NODE}: Ready again ${rebootToReadyS} s after the power button`);
  const rejoin = joinserviceLog(ctx).find((l) => !logBefore.has(l) && l.includes('issuing rejoin ticket') && l.includes(uuid));
  assert.ok(rejoin, `a rejoin ticket for the same disk ${uuid} since the reboot`);
  ctx.log(`joinservice: ${rejoin.slice(0, 300)}`);
  assert.ok(ctx.opensDisk(VM_NODE, ctx.diskKey(VM_NODE)), 'the same key still opens the header');
  const console = readFileSync(vmPaths(ctx.layout, VM_NODE).console, 'latin1');
  assert.doesNotMatch(console, /component artifact fetched/, 'a rejoin fetches no component again (they are on the state disk)');
  const read = `console.log(require('fs').readFileSync('/data/marker','utf8').slice(0,${marker.length}))`;
  assert.equal((await runOnVm(ctx, 'vm-marker-read', read)).trim(), marker, 'the marker written before the reboot is read after it');
  return rebootToReadyS;
}

/**
 * A second VM booted from the image with one more kernel argument ({@link TAMPERED_VM}, a fresh
 * node): the joinservice refuses it, naming a boot PCR. Removes it; returns the seconds from
 * QEMU start to the refusal. Runs beside the VM worker's join (the refusal needs no other step).
 */
export async function tamperedVmRefused(ctx: RealClusterContext): Promise<number> {
  const state = JSON.parse(readFileSync(ctx.layout.stateFile, 'utf8')) as { vmImage: string };
  const tampered = join(ctx.root, 'node-image-cmdline.raw');
  execFileSync('bash', [join(WORKSPACE_ROOT, 'tools/image/scripts/repack-uki.sh'), state.vmImage, tampered, '--cmdline-extra', 'asterism.test=tampered'], { stdio: 'ignore', timeout: 300_000 });
  const before = new Set(joinserviceLog(ctx));
  const started = Date.now();
  await addVmWorker(ctx.root, TAMPERED_VM, { image: tampered });
  try {
    const refusal = await eventually('the joinservice refusing the tampered VM', every(3000, async () => joinserviceLog(ctx).find((l) => !before.has(l) && l.includes('rejected aTLS peer') && l.includes('MEASUREMENT_MISMATCH') && /PCR\[(4|9|11)\]/.test(l))), JOIN_TIMEOUT_MS);
    const s = seconds(Date.now() - started);
    ctx.log(`tampered command line refused ${s} s after QEMU started: ${refusal.slice(0, 400)}`);
    assert.match(refusal, /"code":"ATTESTATION_INVALID"/);
    assert.equal(await ctx.core.readNode({ name: TAMPERED_VM }).then(() => true, () => false), false, 'the tampered VM never registered a Node');
    return s;
  } finally {
    await removeVm(ctx, TAMPERED_VM);
    rmSync(tampered, { force: true });
  }
}

/** What the VM worker had before an outage, checked after it. */
export interface VmBeforeOutage {
  key: Buffer;
  marker: string;
  bootId: string | undefined;
}

/**
 * Full outage, VM side: the VM is power-cycled (hard, no orderly shutdown: a power cut) with
 * the namespace nodes (the caller reboots those). No joinservice answers, so its bootstrapper
 * waits with the recovery server listening.
 */
export async function powerCycleForOutage(ctx: RealClusterContext, marker: string): Promise<VmBeforeOutage> {
  const before = { key: ctx.diskKey(VM_NODE), marker, bootId: await bootId(ctx) };
  await powerCycleVmWorker(ctx.root, VM_NODE);
  return before;
}

/**
 * `asterism recover` unlocks the waiting VM (run while the control planes still wait, so no
 * rejoin can have done it): `recover` is the caller's CLI call for one endpoint. The VM's console
 * shows the key delivered by the recovery path. Returns seconds from the recovery server
 * listening to the key delivered.
 */
export async function recoverVm(ctx: RealClusterContext, recover: (endpoint: string) => Promise<{ code: number | null; stdout: string; stderr: string }>): Promise<number> {
  const listening = await consoleShows(ctx, /"msg":"recovery server waiting"/, JOIN_TIMEOUT_MS);
  const ip = vmIp(ctx);
  const r = await recover(ip);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, new RegExp(`${ip.replaceAll('.', '\\.')}:9999\\trecovered`));
  // One JSON line (its keys in any order) with the message and the path that delivered the key.
  const delivered = await consoleShows(ctx, /^(?=.*"msg":"state disk key delivered")(?=.*"by":"recovery").*$/m, 5 * 60_000);
  ctx.log(`${VM_NODE}: key delivered by asterism recover ${seconds(delivered - listening)} s after the recovery server listened`);
  return seconds(delivered - listening);
}

/** After the outage and both recoveries: the VM is Ready again with the same disk key, and the marker written before is read back. */
export async function vmBackAfterOutage(ctx: RealClusterContext, before: VmBeforeOutage): Promise<void> {
  // The Node's Ready condition from before the outage stays until the kubelet of this boot reports.
  await eventually(`${VM_NODE} Ready after the outage`, every(2000, async () => {
    const id = await bootId(ctx);
    return id && id !== before.bootId && (await ctx.ready(VM_NODE)) ? true : undefined;
  }), JOIN_TIMEOUT_MS);
  assert.ok(ctx.opensDisk(VM_NODE, before.key), 'the same disk key opens the header after the recovery');
  const read = `console.log(require('fs').readFileSync('/data/marker','utf8').slice(0,${before.marker.length}))`;
  assert.equal((await runOnVm(ctx, 'vm-marker-read-recovered', read)).trim(), before.marker, 'the marker written before the outage is read after it');
}

/** The VM worker's address on the cluster network. */
export function vmIp(ctx: RealClusterContext, name = VM_NODE): string {
  const state = JSON.parse(readFileSync(ctx.layout.stateFile, 'utf8')) as { nodes: Array<{ name: string; ip: string }> };
  const ip = state.nodes.find((n) => n.name === name)?.ip;
  if (!ip) throw new Error(`${name} is not in the cluster state`);
  return ip;
}

/** The serial console of a VM node (every boot's, oldest first), for the secret-leak checks. */
export function vmConsoles(ctx: RealClusterContext, name = VM_NODE): string[] {
  const dir = dirname(vmPaths(ctx.layout, name).console);
  return existsSync(dir) ? readdirSync(dir).filter((f) => /^console.*\.log$/.test(f)).sort().map((f) => readFileSync(join(dir, f), 'latin1')) : [];
}

/** The asterism CLI as an operator on the nodes' network runs it (inside the router namespace). */
export function operatorCli(args: string[], timeoutMs = 150_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCaptured('nsenter', [`--net=/run/netns/${NETWORK.routerNamespace}`, process.execPath, '--import', TSX, join(WORKSPACE_ROOT, 'apps/cli/src/main.ts'), ...args], { cwd: WORKSPACE_ROOT, timeoutMs });
}

/** `asterism recover` of `endpoints` with the cluster's master secret and attestation config. */
export function recoverWithCli(ctx: RealClusterContext, endpoints: string[], timeoutS = 90): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return operatorCli(['recover', ...endpoints.map((e) => `--endpoint=${e}`), `--master-secret=${join(ctx.layout.workspace, 'asterism-mastersecret.json')}`, `--timeout=${timeoutS}`, '--variant=qemu-vtpm', `--attestation-config=${ctx.layout.attestationConfigFile}`], (timeoutS + 60) * 1000);
}

/**
 * A full outage of the whole cluster, recovered with `asterism recover`: every namespace node is
 * rebooted and the VM power-cycled; the VM is recovered first (no joinservice is up, so only the
 * recovery path can unlock it), then the control planes; the other namespace workers rejoin on
 * their own; the VM is Ready again with its data. Returns seconds from the outage to the VM Ready.
 */
export async function fullOutageRecovered(ctx: RealClusterContext, marker: string): Promise<number> {
  const state = JSON.parse(readFileSync(ctx.layout.stateFile, 'utf8')) as { nodes: Array<{ name: string; role: string; ip: string; vm?: unknown }> };
  const namespaceNodes = state.nodes.filter((n) => n.vm === undefined);
  const outage = Date.now();
  const before = await powerCycleForOutage(ctx, marker);
  await rebootRealNodes(ctx.root, namespaceNodes.map((n) => n.name));
  await recoverVm(ctx, (ip) => recoverWithCli(ctx, [ip], 60));
  const controlPlanes = namespaceNodes.filter((n) => n.role === 'ControlPlane');
  for (const n of controlPlanes) await eventually(`${n.name} waits for its disk key`, async () => (ctx.status(n.name)?.phase === 'waiting' ? true : undefined), 120_000);
  const cps = await recoverWithCli(ctx, controlPlanes.map((n) => n.ip));
  assert.equal(cps.code, 0, cps.stdout + cps.stderr);
  await vmBackAfterOutage(ctx, before);
  const s = seconds(Date.now() - outage);
  ctx.log(`${VM_NODE}: Ready with its data ${s} s after the outage`);
  return s;
}
