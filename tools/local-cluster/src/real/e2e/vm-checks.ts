/**
 * Scenario: a VM worker (docs/adr/0039-vm-nodes-local-cluster.md) in the real-node cluster. The
 * node image boots in QEMU (TCG) with a firmware-measured boot, attests to the joinservice pod
 * with the image's predicted PCRs, maps its dm-crypt + dm-integrity state disk, installs its
 * components, joins with kubeadm and runs a pod; a marker the pod writes is on the mapped device
 * and not in the raw disk image; a power cycle rejoins (rejoin ticket for the same disk UUID, the
 * same key opens the header, the marker survives); a boot with a changed kernel command line is
 * refused naming the PCR. The VM is removed at the end (Node object, QEMU, tap, lease).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, kubectlBinary, WORKSPACE_ROOT } from '@asterism/testing';
import { vmPaths } from '../vm-node.js';
import { addVmWorker, powerCycleVmWorker, removeVmWorker } from '../vm-workers.js';
import { setMonitorTiming } from './attestation-support.js';
import type { RealClusterContext } from './context.js';

/** The VM worker's name. */
export const VM_NODE = 'vm-worker-0';
/** QEMU start to Node Ready under TCG on 2 shared cores (minutes; the CI machine runs the rest beside it). */
const JOIN_TIMEOUT_MS = 30 * 60_000;

/** What the scenario measured (reported by the suite). */
export interface VmTimes {
  bootToBootstrapperS: number;
  bootstrapperToReadyS: number;
  rebootToReadyS: number;
  qemuRssMiB: number;
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
  // /dev whole: /dev/mapper/state is a symlink to ../dm-<n>.
  const volume = opts.device ? { name: 'd', hostPath: { path: '/dev', type: 'Directory' } } : { name: 'd', hostPath: { path: '/var/lib/kubelet/asterism-e2e', type: 'DirectoryOrCreate' } };
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      nodeName: VM_NODE,
      restartPolicy: 'Never',
      containers: [{ name: 'c', image, imagePullPolicy: 'Never', command: ['/usr/bin/node', '-e', script], securityContext: { runAsUser: 0, privileged: opts.device ?? false }, volumeMounts: [{ name: 'd', mountPath: '/data' }] }],
      volumes: [volume],
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

/** When (ms since the epoch) the console first shows `pattern`, polled each second. */
async function consoleShows(ctx: RealClusterContext, pattern: RegExp, timeoutMs: number): Promise<number> {
  const path = vmPaths(ctx.layout, VM_NODE).console;
  return eventually(`${VM_NODE} console shows ${pattern}`, every(1000, async () => (existsSync(path) && pattern.test(readFileSync(path, 'latin1')) ? Date.now() : undefined)), timeoutMs);
}

function joinserviceLog(ctx: RealClusterContext): string[] {
  return ctx.kubectl('-n', 'kube-system', 'logs', '-l', 'k8s-app=join-service', '--tail=-1', '--prefix=false').split('\n');
}

/** Joins the VM, runs the pod, checks the disk, power-cycles, boots a tampered image; removes the VM. */
export async function vmWorkerLifecycle(ctx: RealClusterContext): Promise<VmTimes> {
  // The chart's verification service reaches a namespace node's swtpm socket, not a VM's TPM: the
  // monitor sees the VM as Unreachable, so its grace outlasts this scenario (ADR 0039).
  setMonitorTiming(ctx, 20, 3600);
  try {
    return await lifecycle(ctx);
  } finally {
    spawnSync(kubectlBinary(), ['--kubeconfig', ctx.layout.hostKubeconfig, 'delete', 'node', VM_NODE, '--ignore-not-found', '--wait=false']);
    await removeVmWorker(ctx.root, VM_NODE).catch((err: unknown) => ctx.log(`removing ${VM_NODE}: ${(err as Error).message}`));
    setMonitorTiming(ctx, 20, 300);
  }
}

async function lifecycle(ctx: RealClusterContext): Promise<VmTimes> {
  const started = Date.now();
  await addVmWorker(ctx.root, VM_NODE);
  const bootstrapperAt = await consoleShows(ctx, /"msg":"joining as"/, JOIN_TIMEOUT_MS);
  ctx.log(`${VM_NODE}: bootstrapper joining ${seconds(bootstrapperAt - started)} s after QEMU started`);
  await eventually(`${VM_NODE} Ready`, every(2000, async () => ((await ctx.ready(VM_NODE)) ? true : undefined)), JOIN_TIMEOUT_MS);
  const readyAt = Date.now();
  ctx.log(`${VM_NODE}: Ready ${seconds(readyAt - bootstrapperAt)} s later`);
  const { qemuRssMiB } = vmRunsImageKernel(ctx);
  const marker = await markerOnlyOnMappedDevice(ctx);
  const rebootToReadyS = await powerCycleRejoins(ctx, marker);
  await tamperedCommandLineRefused(ctx);
  return { bootToBootstrapperS: seconds(bootstrapperAt - started), bootstrapperToReadyS: seconds(readyAt - bootstrapperAt), rebootToReadyS, qemuRssMiB };
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

/** A pod writes a fresh marker onto the state disk (hostPath below /var/lib/kubelet) and logs the guest's memory; returns the marker. */
export async function writeMarker(ctx: RealClusterContext): Promise<string> {
  const marker = `asterism-vm-marker-${randomBytes(12).toString('hex')}`;
  const write = `const fs=require('fs');const fd=fs.openSync('/data/marker','w');fs.writeSync(fd,${JSON.stringify(marker)}.repeat(128));fs.fsyncSync(fd);fs.closeSync(fd);console.log(fs.readFileSync('/proc/meminfo','utf8').split('\\n').filter((l)=>/^(MemTotal|MemFree|MemAvailable|Cached):/.test(l)).join('; '));console.log('written')`;
  const out = await runOnVm(ctx, 'vm-marker-write', write);
  assert.match(out, /written/);
  ctx.log(`${VM_NODE}: a pod wrote the marker onto the state disk; guest memory: ${out.split('\n')[0]}`);
  return marker;
}

/**
 * A pod writes a marker onto the state disk (hostPath below /var/lib/kubelet, a bind mount of
 * it); the raw disk image on the host holds no copy, a privileged pod finds it on the mapped
 * device. Logs the guest's memory as the pod sees it (/proc/meminfo is the VM kernel's). Returns the marker.
 */
export async function markerOnlyOnMappedDevice(ctx: RealClusterContext): Promise<string> {
  const marker = await writeMarker(ctx);
  const disk = vmPaths(ctx.layout, VM_NODE).stateDisk;
  // The pod's fsync put the marker's blocks through dm-crypt; QEMU's writes are in the host's page cache, which this read sees.
  assert.equal(fileContains(disk, Buffer.from(marker)), false, 'the raw state disk image holds no byte run of the marker');
  // The fast format (docs/adr/0041) leaves never-written sectors without valid integrity tags:
  // reading them is EIO by design, and a read that reaches one returns what came before it. The
  // scan reads 4 MiB at a time from where the last read stopped; at an unreadable spot it steps
  // 4 KiB (an ext4 block) at a time until 16 blocks in a row read again, counting what it could not
  // read (never written, so none of it holds the marker). Bounded to 10 minutes.
  const scan = [
    `const fs=require('fs');const m=Buffer.from(${JSON.stringify(marker)});const fd=fs.openSync('/data/mapper/state','r');`,
    `const rd=(b,len,pos)=>{try{return fs.readSync(fd,b,0,len,pos)}catch(e){if(e.code==='EIO')return -1;throw e}};`,
    `const B=4<<20,K=4096,b=Buffer.alloc(B),t0=Date.now();let c=Buffer.alloc(0),skipped=0,good=16;`,
    `for(let p=0;;){if(Date.now()-t0>600000){console.log('timeout at '+p);break}const n=rd(b,good>=16?B:K,p);`,
    `if(n<0){skipped+=K;p+=K;good=0;c=Buffer.alloc(0);continue}`,
    `if(n===0){console.log('absent; unreadable '+skipped+' of '+p);break}good++;`,
    `const v=Buffer.concat([c,b.subarray(0,n)]);const i=v.indexOf(m);if(i>=0){console.log('found at '+(p-c.length+i)+'; unreadable before it '+skipped+' bytes, '+(Date.now()-t0)+' ms');break}`,
    `c=v.subarray(Math.max(0,v.length-m.length+1));p+=n}`,
  ].join('');
  const found = await runOnVm(ctx, 'vm-marker-scan', scan, { device: true });
  assert.match(found, /found at \d+/, 'the mapped device inside the VM holds the marker');
  ctx.log(`${VM_NODE}: marker ${found.trim()} of /dev/mapper/state inside the VM, absent from the raw image ${disk}`);
  return marker;
}

/**
 * Power cycle (same disk, same vTPM state): the node rejoins with a rejoin ticket for the same
 * disk UUID, the same key opens the header, the marker is read back, and the components on the
 * state disk are not fetched again. Returns seconds from the reset to Ready.
 */
export async function powerCycleRejoins(ctx: RealClusterContext, marker: string): Promise<number> {
  const disk = vmPaths(ctx.layout, VM_NODE).stateDisk;
  const uuid = execFileSync('cryptsetup', ['luksUUID', disk], { encoding: 'utf8' }).trim().toLowerCase();
  assert.ok(joinserviceLog(ctx).some((l) => l.includes('issuing join ticket') && l.includes(uuid)), `a join ticket for disk ${uuid}`);
  assert.ok(ctx.opensDisk(VM_NODE, ctx.diskKey(VM_NODE)), "the cluster's key for the disk UUID opens the VM's LUKS header");
  const bootBefore = await bootId(ctx);
  const resetAt = Date.now();
  await powerCycleVmWorker(ctx.root, VM_NODE);
  await eventually(`${VM_NODE} Ready after the power cycle`, every(2000, async () => {
    const id = await bootId(ctx);
    return id && id !== bootBefore && (await ctx.ready(VM_NODE)) ? true : undefined;
  }), JOIN_TIMEOUT_MS);
  const rebootToReadyS = seconds(Date.now() - resetAt);
  ctx.log(`${VM_NODE}: Ready again ${rebootToReadyS} s after the power cycle`);
  const rejoin = joinserviceLog(ctx).find((l) => l.includes('issuing rejoin ticket') && l.includes(uuid));
  assert.ok(rejoin, `a rejoin ticket for the same disk ${uuid}`);
  ctx.log(`joinservice: ${rejoin.slice(0, 300)}`);
  assert.ok(ctx.opensDisk(VM_NODE, ctx.diskKey(VM_NODE)), 'the same key still opens the header');
  const console = readFileSync(vmPaths(ctx.layout, VM_NODE).console, 'latin1');
  assert.doesNotMatch(console, /component artifact fetched/, 'a rejoin fetches no component again (they are on the state disk)');
  const read = `console.log(require('fs').readFileSync('/data/marker','utf8').slice(0,${marker.length}))`;
  assert.equal((await runOnVm(ctx, 'vm-marker-read', read)).trim(), marker, 'the marker written before the reboot is read after it');
  return rebootToReadyS;
}

/** The VM booted from the same image with one more kernel argument: the joinservice refuses its rejoin, naming a boot PCR. */
export async function tamperedCommandLineRefused(ctx: RealClusterContext): Promise<void> {
  const state = JSON.parse(readFileSync(ctx.layout.stateFile, 'utf8')) as { vmImage: string };
  const tampered = join(ctx.root, 'node-image-cmdline.raw');
  execFileSync('bash', [join(WORKSPACE_ROOT, 'tools/image/scripts/repack-uki.sh'), state.vmImage, tampered, '--cmdline-extra', 'asterism.test=tampered'], { stdio: 'ignore', timeout: 300_000 });
  const before = new Set(joinserviceLog(ctx));
  await powerCycleVmWorker(ctx.root, VM_NODE, tampered);
  const refusal = await eventually('the joinservice refusing the tampered VM', every(3000, async () => joinserviceLog(ctx).find((l) => !before.has(l) && l.includes('rejected aTLS peer') && l.includes('MEASUREMENT_MISMATCH') && /PCR\[(4|9|11)\]/.test(l))), JOIN_TIMEOUT_MS);
  ctx.log(`tampered command line refused: ${refusal.slice(0, 400)}`);
  assert.match(refusal, /"code":"ATTESTATION_INVALID"/);
}
