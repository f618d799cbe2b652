/**
 * VM workers of the kubeadm backend (docs/adr/0039-vm-nodes-local-cluster.md): the node image
 * (built by tools/image when needed), its predicted measurements as the cluster's attestation
 * config, the QEMU metadata API and DHCP on the router's bridge, and per VM a tap device and a
 * QEMU + swtpm pair (./vm-node.ts). Stages of adding a VM: metadata -> tap -> DHCP lease -> boot.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readState, TSX, WORKSPACE_ROOT, writeState, type ClusterState } from '../cluster.js';
import { alive, startDetached, stopDetached } from '../detached.js';
import { ClusterLayout, type NodeSpec } from '../layout.js';
import { writeMetadataFile } from '../metadata-file.js';
import { imageMeasurements, writeBootEvents } from './image-measurements.js';
import { METADATA_API_PORT } from './metadata-api.js';
import { NETWORK, nodeAddress } from './network.js';
import { bootVm, DEFAULT_VM_SIZE, monitorCommand, stopVm, vmPaths, vmToolsMissing, type VmSize } from './vm-node.js';
import { addVmTap, removeVmTap, startDhcp, vmNic } from './vm-network.js';

const run = promisify(execFile);

/** Where `up --vm-workers` builds the node image when none is given (its own folder: the image tests build dist/image). */
export const DEFAULT_VM_IMAGE_DIR = join(WORKSPACE_ROOT, 'dist', 'local-cluster-image');
const BUILD_IMAGE = join(WORKSPACE_ROOT, 'tools/image/scripts/build-image.sh');
const METADATA_API = join(WORKSPACE_ROOT, 'tools/local-cluster/src/real/metadata-api.ts');

/** A node of the cluster state that is a VM. */
export type VmNodeState = ClusterState['nodes'][number] & { vm: NonNullable<ClusterState['nodes'][number]['vm']> };

/** Whether a state node is a VM. */
export const isVm = (n: ClusterState['nodes'][number]): n is VmNodeState => n.vm !== undefined;

/**
 * The image VM nodes boot: `image` when given, else built (or kept: build-image.sh skips an
 * unchanged build) in {@link DEFAULT_VM_IMAGE_DIR}. Writes the image's attestation config as the
 * cluster's and the events the namespace nodes replay.
 */
export async function prepareVmImage(layout: ClusterLayout, say: (l: string) => void, image?: string): Promise<string> {
  const missing = vmToolsMissing();
  if (missing.length > 0) throw new Error(`VM nodes need ${missing.join(', ')}: run bash tools/scripts/setup.sh`);
  let path = image;
  if (!path) {
    say(`  building the node image into ${DEFAULT_VM_IMAGE_DIR} (kept when its inputs are unchanged)`);
    await run('bash', [BUILD_IMAGE, '--out', DEFAULT_VM_IMAGE_DIR], { maxBuffer: 64 * 2 ** 20, timeout: 60 * 60_000 });
    path = join(DEFAULT_VM_IMAGE_DIR, 'node-image.raw');
  }
  if (!existsSync(path)) throw new Error(`no node image at ${path}`);
  const m = await imageMeasurements(path);
  await writeFile(layout.attestationConfigFile, m.configJson, { mode: 0o600 });
  await writeBootEvents(layout.bootEventsFile, m.events);
  return path;
}

/** Starts the QEMU metadata API (router namespace, bridge address) and records it as a forward. */
export async function startMetadataApi(layout: ClusterLayout, state: ClusterState): Promise<void> {
  if ((state.forwards ?? []).some((f) => f.name === 'metadata' && f.pids.every(alive))) return;
  const log = join(layout.root, 'metadata-api.log');
  const p = startDetached('metadata', 'nsenter', [`--net=/run/netns/${NETWORK.routerNamespace}`, process.execPath, '--import', TSX, METADATA_API, layout.metadataFile, NETWORK.routerIp, String(METADATA_API_PORT)], log, { cwd: WORKSPACE_ROOT });
  for (let i = 0; i < 300; i++) {
    if ((await readFile(log, 'utf8').catch(() => '')).includes('metadata API listening')) {
      state.forwards = [...(state.forwards ?? []), { name: 'metadata', hostPort: 0, pids: [p.pid] }];
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the metadata API did not start (see ${log})`);
}

/** (Re)starts DHCP with a lease for every VM node of the state. */
async function restartDhcp(layout: ClusterLayout, state: ClusterState): Promise<void> {
  const old = (state.forwards ?? []).find((f) => f.name === 'dhcp');
  const vms = state.nodes.filter(isVm).map((n) => ({ node: nodeAddress(n.name, n.vm.index), nic: vmNic(n.vm.index) }));
  const pid = await startDhcp(layout, vms, old?.pids[0]);
  state.forwards = [...(state.forwards ?? []).filter((f) => f.name !== 'dhcp'), { name: 'dhcp', hostPort: 0, pids: [pid] }];
}

/** Options of one VM node. */
export interface VmNodeOptions {
  image: string;
  size?: Partial<VmSize>;
}

/**
 * Adds a VM node at address-plan index `index`: records it (state + metadata file, so the
 * metadata API names it), creates its tap and lease, boots it. The caller writes the state.
 */
export async function addVmNode(layout: ClusterLayout, state: ClusterState, node: NodeSpec, index: number, o: VmNodeOptions): Promise<VmNodeState> {
  const size = { ...DEFAULT_VM_SIZE, ...(o.size ?? {}) };
  const address = nodeAddress(node.name, index);
  const nic = vmNic(index);
  const entry: VmNodeState = { ...node, ip: address.ip, swtpm: 0, bootstrapper: 0, vm: { index, image: o.image, tap: nic.tap, mac: nic.mac, memoryMiB: size.memoryMiB } };
  state.nodes.push(entry);
  await writeMetadataFile(layout.metadataFile, state.nodes, await initSecretHash(layout));
  await addVmTap(address, nic);
  await restartDhcp(layout, state);
  const p = await bootVm(layout, node.name, o.image, nic, size);
  entry.bootstrapper = p.qemu;
  entry.swtpm = p.swtpm;
  return entry;
}

/** Restarts a VM node's QEMU and swtpm (a power cycle: same disk, same vTPM state), optionally from another image. */
export async function powerCycleVm(layout: ClusterLayout, entry: VmNodeState, image = entry.vm.image): Promise<void> {
  await stopVm({ qemu: entry.bootstrapper, swtpm: entry.swtpm });
  // QEMU truncates the console file: the earlier boots' consoles stay as console-<time>.log.
  const consoleLog = vmPaths(layout, entry.name).console;
  if (existsSync(consoleLog)) await rename(consoleLog, consoleLog.replace(/\.log$/, `-${Date.now()}.log`));
  const p = await bootVm(layout, entry.name, image, vmNic(entry.vm.index), { ...DEFAULT_VM_SIZE, memoryMiB: entry.vm.memoryMiB });
  entry.bootstrapper = p.qemu;
  entry.swtpm = p.swtpm;
}

/** How long an orderly shutdown may take under TCG (systemd stops the kubelet, containerd and its pods, unmounts the state disk). */
const SHUTDOWN_TIMEOUT_MS = 5 * 60_000;

/**
 * Reboots a VM node in order: the ACPI power button (QEMU `system_powerdown`), the guest shuts
 * down (its kernel sends the vTPM TPM2_Shutdown), QEMU exits, and the node boots again with the
 * same disk and vTPM state. A power cycle ({@link powerCycleVm}) is a non-orderly TPM start-up
 * instead: the vTPM's dictionary-attack counter counts those and locks the attestation key after
 * three (TPM_RC_LOCKOUT), so a reboot is never one. Fails when the guest does not power off.
 */
export async function rebootVm(layout: ClusterLayout, entry: VmNodeState): Promise<void> {
  await monitorCommand(layout, entry.name, 'system_powerdown');
  const deadline = Date.now() + SHUTDOWN_TIMEOUT_MS;
  while (alive(entry.bootstrapper)) {
    if (Date.now() > deadline) throw new Error(`${entry.name} did not power off within ${SHUTDOWN_TIMEOUT_MS / 1000} s of the ACPI power button (see ${vmPaths(layout, entry.name).console})`);
    await new Promise((r) => setTimeout(r, 500));
  }
  await powerCycleVm(layout, entry);
}

/** Stops a VM node and removes its tap, lease and metadata entry (its folder stays until `down`). */
export async function removeVmNode(layout: ClusterLayout, state: ClusterState, name: string): Promise<void> {
  const entry = state.nodes.find((n) => n.name === name);
  if (!entry || !isVm(entry)) throw new Error(`${name} is not a VM node of this cluster`);
  await stopVm({ qemu: entry.bootstrapper, swtpm: entry.swtpm });
  await removeVmTap(vmNic(entry.vm.index));
  state.nodes = state.nodes.filter((n) => n.name !== name);
  await writeMetadataFile(layout.metadataFile, state.nodes, await initSecretHash(layout));
  await restartDhcp(layout, state);
}

/** Stops every VM node's QEMU and swtpm (down). */
export async function stopVmNodes(state: ClusterState | undefined): Promise<number> {
  let n = 0;
  for (const v of (state?.nodes ?? []).filter(isVm)) {
    if (v.bootstrapper > 0 && alive(v.bootstrapper)) n++;
    await stopVm({ qemu: v.bootstrapper, swtpm: v.swtpm });
  }
  return n;
}

async function initSecretHash(layout: ClusterLayout): Promise<string> {
  return (JSON.parse(await readFile(layout.metadataFile, 'utf8')) as { initSecretHash: string }).initSecretHash;
}

/** Stops a pid's process group if it is alive (leftover helpers). */
export async function stopIfAlive(pid: number): Promise<void> {
  if (pid > 0 && alive(pid)) await stopDetached(pid, 2000);
}

/**
 * The state file is read, changed and written by each of the calls below: a test drives two VMs
 * at once (one joining, one booted from a tampered image), so the calls of this process run one
 * after the other.
 */
let stateChanges: Promise<unknown> = Promise.resolve();
function oneAtATime<T>(fn: () => Promise<T>): Promise<T> {
  const next = stateChanges.then(fn, fn);
  stateChanges = next.catch(() => undefined);
  return next;
}

/** Options of {@link addVmWorker}. */
export interface AddVmWorkerOptions {
  size?: Partial<VmSize>;
  /** Boot another image than the cluster's (a tampered variant: the joinservice must refuse it). */
  image?: string;
}

/**
 * Adds a VM worker to a running kubeadm-backend cluster that `up` prepared for VMs (its
 * attestation config is the image's): next free address-plan index, metadata API started when
 * needed. Returns the node's entry.
 */
export function addVmWorker(root: string, name: string, o: AddVmWorkerOptions = {}): Promise<VmNodeState> {
  return oneAtATime(async () => {
    const { layout, state } = await loadKubeadmCluster(root);
    if (!state.vmImage) throw new Error(`the cluster in ${root} was not prepared for VM nodes (up --vm-workers, or vmImage)`);
    if (state.nodes.some((n) => n.name === name)) throw new Error(`${name} already exists`);
    await startMetadataApi(layout, state);
    const entry = await addVmNode(layout, state, { name, role: 'Worker', ip: '' }, freeIndex(state), { image: o.image ?? state.vmImage, ...(o.size ? { size: o.size } : {}) });
    await writeState(layout, state);
    return entry;
  });
}

/** The lowest address-plan index no node of the state uses (a removed VM's index is free again). */
export function freeIndex(state: Pick<ClusterState, 'nodes'>): number {
  const used = new Set(state.nodes.map((n, i) => (isVm(n) ? n.vm.index : i)));
  let i = state.nodes.length;
  while (used.has(i)) i++;
  return i;
}

/** Power-cycles a VM worker (hard reset: QEMU and swtpm restarted, disk and vTPM state kept), optionally from another image. */
export function powerCycleVmWorker(root: string, name: string, image?: string): Promise<VmNodeState> {
  return changeVm(root, name, (layout, entry) => powerCycleVm(layout, entry, image));
}

/** Reboots a VM worker in order ({@link rebootVm}). */
export function rebootVmWorker(root: string, name: string): Promise<VmNodeState> {
  return changeVm(root, name, rebootVm);
}

/** Runs `change` on a VM node's state entry (one state change at a time) and writes the state. */
function changeVm(root: string, name: string, change: (layout: ClusterLayout, entry: VmNodeState) => Promise<void>): Promise<VmNodeState> {
  return oneAtATime(async () => {
    const { layout, state } = await loadKubeadmCluster(root);
    const entry = state.nodes.find((n) => n.name === name);
    if (!entry || !isVm(entry)) throw new Error(`${name} is not a VM node of the cluster in ${root}`);
    await change(layout, entry);
    await writeState(layout, state);
    return entry;
  });
}

/** Removes a VM worker from the cluster state, network and metadata (the Node object is the caller's). */
export function removeVmWorker(root: string, name: string): Promise<void> {
  return oneAtATime(async () => {
    const { layout, state } = await loadKubeadmCluster(root);
    await removeVmNode(layout, state, name);
    await writeState(layout, state);
  });
}

async function loadKubeadmCluster(root: string): Promise<{ layout: ClusterLayout; state: ClusterState }> {
  const layout = new ClusterLayout(root);
  const state = await readState(layout);
  if (!state || state.backend !== 'kubeadm') throw new Error(`no kubeadm-backend cluster in ${root}`);
  return { layout, state };
}
