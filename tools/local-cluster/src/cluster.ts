import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import { startDetached, stopDetached, type DetachedProcess } from './detached.js';
import { newInitSecret } from './init-secret.js';
import { ClusterLayout, planNodes, type NodeSpec } from './layout.js';
import { createHostKey, createStateDisk, resetTpm, startSwtpm } from './machine.js';
import { attestationConfigJson, measureBoot } from './measured-boot.js';
import { writeMetadataFile } from './metadata-file.js';
import { sessionProcesses } from './processes.js';
import { bootstrapperProgram, buildPrograms, SIMULATED_NODE_ENTRY } from './programs.js';

/** The checkout this tool runs from. */
export const WORKSPACE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** tsx's loader, for starting the TypeScript entry points. */
export const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** What `up` records so that `status`, `down` and the fault scenarios find everything. */
export interface ClusterState {
  created: string;
  binDir: string;
  /** `local` (default): simulated nodes; `kubeadm`: real nodes (docs/adr/0019-node-runtime.md). */
  backend?: 'local' | 'kubeadm';
  /** Local backend: `bundles` when `up` built the programs (programs.ts); absent: the sources through tsx. */
  runtime?: ProgramRuntime;
  /** kubeadm backend: `bootstrapper` is the pid of the node's supervisor (its processes live in the node's cgroup). */
  nodes: Array<
    NodeSpec & {
      swtpm: number;
      bootstrapper: number;
      tampered?: boolean;
      /** kubeadm backend: a VM node (`bootstrapper` is its QEMU's pid); docs/adr/0039-vm-nodes-local-cluster.md. */
      vm?: { index: number; image: string; tap: string; mac: string; memoryMiB: number };
    }
  >;
  /** kubeadm backend: every node `up` planned, recorded before any is created (for `down` after a failed `up`). */
  planned?: string[];
  /**
   * kubeadm backend: false until this `up` created the machine's cluster network. A `down` of a
   * cluster that never got the network (another `up` won it) leaves the network and the planned
   * names' node cgroups alone: they belong to the other cluster. Absent in older states (= true).
   */
  networkClaimed?: boolean;
  /** kubeadm backend: host loopback forwards into the private network (and the artifact server, hostPort 0). */
  forwards?: Array<{ name: string; hostPort: number; pids: number[] }>;
  /** kubeadm backend: the cluster's Kubernetes version, whose components every node installs. */
  kubernetesVersion?: string;
  /** kubeadm backend: the node image VM nodes boot (its prediction is the cluster's attestation config). */
  vmImage?: string;
}

/** A node's bootstrap status (written by the bootstrapper). */
export interface NodeStatusFile {
  phase: string;
  pcr15?: string;
  bootstrapMs?: number;
  error?: string;
}

export interface UpOptions {
  root: string;
  controlPlanes: number;
  workers: number;
  binDir: string;
  /** Nodes whose measured boot is tampered with (they must be refused). */
  tamper?: string[];
  progress?: (line: string) => void;
  timeoutMs?: number;
}

export async function readState(layout: ClusterLayout): Promise<ClusterState | undefined> {
  try {
    return JSON.parse(await readFile(layout.stateFile, 'utf8')) as ClusterState;
  } catch {
    return undefined;
  }
}

/** Records the cluster (mode 0600: it names every process and file). */
export async function writeState(layout: ClusterLayout, state: ClusterState): Promise<void> {
  await writeFile(layout.stateFile, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}

export async function readNodeStatus(layout: ClusterLayout, node: string): Promise<NodeStatusFile | undefined> {
  try {
    return JSON.parse(await readFile(layout.nodeStatus(node), 'utf8')) as NodeStatusFile;
  } catch {
    return undefined;
  }
}

/** How a local cluster's processes run: from the bundles `up` built, or from the sources through tsx. */
export type ProgramRuntime = 'bundles' | 'sources';

/** `node <flags> <bundle> --local-apps=...` or `node --import tsx <sources>`. */
function bootstrapperCommand(layout: ClusterLayout, runtime: ProgramRuntime): string[] {
  if (runtime === 'sources') return ['--import', TSX, SIMULATED_NODE_ENTRY];
  const program = bootstrapperProgram(layout);
  return [...program.nodeFlags, program.entry, `--local-apps=${layout.programsFile}`];
}

/**
 * Starts a node's bootstrapper process (detached, own session: a verification-service program it
 * hands over to stays in that session after it exits, so stopping the session stops the node).
 */
export function startBootstrapper(layout: ClusterLayout, node: NodeSpec, binDir: string, first: boolean, runtime: ProgramRuntime = 'sources'): DetachedProcess {
  return startDetached(
    'bootstrapper',
    process.execPath,
    [
      ...bootstrapperCommand(layout, runtime),
      '--attestation-variant=qemu-vtpm',
      '--csp=QEMU',
      `--state-root=${layout.nodeRoot(node.name)}`,
      `--tpm=unix:${layout.tpmSocket(node.name)}`,
      `--state-disk=${layout.diskImage(node.name)}`,
      `--initial-key=${layout.diskKey(node.name)}`,
      `--metadata=file:${layout.metadataFile}`,
      `--node-name=${node.name}`,
      '--k8s-backend=local',
      `--k8s-bin-dir=${binDir}`,
      `--init-host=${node.ip}`,
      `--log-file=${layout.log(node.name, 'bootstrapper.json')}`,
      `--address=${node.ip}`,
      // Nodes share the host's loopback: without this every join would come from 127.0.0.1 and
      // the joinservice could not look the node up by IP in the metadata file (docs/adr/0008).
      `--join-source-address=${node.ip}`,
      ...(first ? [`--join-attestation-config=${layout.attestationConfigFile}`] : []),
    ],
    layout.log(node.name, 'bootstrapper'),
    { cwd: WORKSPACE_ROOT },
  );
}

/** Boots one node: vTPM, measured boot, state disk, host key, bootstrapper. */
async function bootNode(layout: ClusterLayout, node: NodeSpec, binDir: string, first: boolean, tamper: boolean, runtime: ProgramRuntime) {
  await mkdir(layout.nodeRoot(node.name), { recursive: true, mode: 0o700 });
  const swtpm = await startSwtpm(layout, node.name);
  await measureBoot(layout.tpmSocket(node.name), { tamper });
  await createStateDisk(layout, node.name);
  await createHostKey(layout, node.name);
  const bootstrapper = startBootstrapper(layout, node, binDir, first, runtime);
  return { ...node, swtpm: swtpm.pid, bootstrapper: bootstrapper.pid, ...(tamper ? { tampered: true } : {}) };
}

/** Runs `asterism init` against node 0 like a user would (the real CLI process). */
export function runCliInit(layout: ClusterLayout, node: NodeSpec, progress: (l: string) => void, extra: { args?: string[]; wrapper?: string[] } = {}): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const wrapper = extra.wrapper ?? [];
    const child = spawn(
      wrapper[0] ?? process.execPath,
      [
        ...(wrapper.length > 0 ? [...wrapper.slice(1), process.execPath] : []),
        '--import', TSX,
        join(WORKSPACE_ROOT, 'apps/cli/src/main.ts'),
        'init',
        `--endpoint=${node.ip}:9000`,
        `--workspace=${layout.workspace}`,
        `--init-secret-file=${layout.initSecretFile}`,
        '--variant=qemu-vtpm',
        `--attestation-config=${layout.attestationConfigFile}`,
        '--cluster-name=asterism',
        '--kubernetes-version=v1.34.4',
        '--timeout=120',
        ...(extra.args ?? ['--skip-helm']),
      ],
      { cwd: WORKSPACE_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      for (const line of d.split('\n').filter(Boolean)) progress(`  cli: ${line}`);
    });
    child.on('close', (code) => (code === 0 ? resolvePromise() : reject(new Error(`asterism init failed (exit ${code}): ${out.trim().split('\n').slice(-3).join(' | ')}`))));
  });
}

/** Node objects the API server knows (admin kubeconfig from init). */
export async function nodeObjects(layout: ClusterLayout, kubeconfig = layout.kubeconfig): Promise<string[]> {
  if (!existsSync(kubeconfig)) return [];
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const list = await kc.makeApiClient(k8s.CoreV1Api).listNode();
  return list.items.map((n) => n.metadata?.name ?? '');
}

/** Waits until every (untampered) node reports a finished bootstrap and has a Node object. */
export async function waitForNodes(layout: ClusterLayout, names: string[], timeoutMs: number, progress: (l: string) => void, kubeconfig = layout.kubeconfig): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const seen = new Set<string>();
  for (;;) {
    const objects = await nodeObjects(layout, kubeconfig).catch(() => [] as string[]);
    for (const n of names) {
      const s = await readNodeStatus(layout, n);
      if (s && ['initialized', 'joined', 'rejoined'].includes(s.phase) && objects.includes(n) && !seen.has(n)) {
        seen.add(n);
        progress(`  ${n}: ${s.phase} in ${((s.bootstrapMs ?? 0) / 1000).toFixed(1)} s, Node object present`);
      }
      if (s?.phase === 'failed') throw new Error(`${n} failed: ${s.error ?? 'unknown error'} (see ${layout.log(n, 'bootstrapper')})`);
    }
    if (seen.size === names.length) return;
    if (Date.now() > deadline) throw new Error(`nodes not joined after ${timeoutMs / 1000} s: ${names.filter((n) => !seen.has(n)).join(', ')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** `up`: boots the nodes, inits node 0 through the CLI, waits for all joins. */
export async function up(o: UpOptions): Promise<ClusterState> {
  const say = o.progress ?? (() => undefined);
  const layout = new ClusterLayout(o.root);
  const existing = await readState(layout);
  if (existing && sessionProcesses(existing.nodes.flatMap((n) => [n.bootstrapper, n.swtpm])).length > 0) {
    throw new Error(`a local cluster is already running in ${layout.root}; run "down" first`);
  }
  await rm(layout.root, { recursive: true, force: true });
  await mkdir(layout.workspace, { recursive: true, mode: 0o700 });
  const nodes = planNodes(o.controlPlanes, o.workers);
  const { secret, hash } = await newInitSecret();
  await writeFile(layout.initSecretFile, secret, { mode: 0o600 });
  await writeMetadataFile(layout.metadataFile, nodes, hash);
  await writeFile(layout.attestationConfigFile, attestationConfigJson(), { mode: 0o600 });
  say(`bundling the bootstrapper, keyservice, joinservice and verification-service into ${layout.programsDir}`);
  await buildPrograms(layout);
  say(`booting ${nodes.length} nodes (swtpm vTPM, measured boot, LUKS2 state disk, bootstrapper) in ${layout.root}`);
  const state: ClusterState = { created: new Date().toISOString(), binDir: o.binDir, runtime: 'bundles', nodes: [] };
  for (const [i, node] of nodes.entries()) {
    const booted = await bootNode(layout, node, o.binDir, i === 0, o.tamper?.includes(node.name) ?? false, 'bundles');
    state.nodes.push(booted);
    await writeState(layout, state);
    say(`  ${node.name} (${node.role}, ${node.ip}) booted${booted.tampered ? ' with a TAMPERED initrd measurement' : ''}`);
  }
  say(`initializing the cluster through ${nodes[0]!.name} (asterism init over aTLS)...`);
  await runCliInit(layout, nodes[0]!, say);
  say('waiting for the other nodes to join by attestation...');
  await waitForNodes(layout, state.nodes.filter((n) => !n.tampered).map((n) => n.name), o.timeoutMs ?? 180_000, say);
  return state;
}

/** `down`: stops bootstrappers (which stop their control plane and services) and vTPMs. */
export async function down(root: string, opts: { keep?: boolean } = {}): Promise<number> {
  const layout = new ClusterLayout(root);
  const state = await readState(layout);
  let stopped = 0;
  for (const n of [...(state?.nodes ?? [])].reverse()) {
    // A bootstrapper that exited left its session to a verification-service program (stopped with it).
    stopped += sessionProcesses([n.bootstrapper, n.swtpm]).length;
    for (const pid of [n.bootstrapper, n.swtpm]) await stopDetached(pid, 15_000);
  }
  if (!opts.keep) await rm(layout.root, { recursive: true, force: true });
  return stopped;
}

/** Fault: reboots a node (process killed, vTPM reset, measured boot again, bootstrapper restarted). */
export async function rebootNode(root: string, name: string): Promise<void> {
  const layout = new ClusterLayout(root);
  const state = await readState(layout);
  const node = state?.nodes.find((n) => n.name === name);
  if (!state || !node) throw new Error(`no node ${name} in ${root}`);
  await stopDetached(node.bootstrapper, 0);
  await rm(layout.nodeStatus(name), { force: true });
  await resetTpm(layout, name);
  await measureBoot(layout.tpmSocket(name), { tamper: node.tampered ?? false });
  node.bootstrapper = startBootstrapper(layout, node, state.binDir, false, state.runtime ?? 'sources').pid;
  await writeState(layout, state);
}

/** Fault: adds a node whose measured boot was tampered with (it must be refused). */
export async function addNode(root: string, name: string, opts: { tamper?: boolean } = {}): Promise<NodeSpec> {
  const layout = new ClusterLayout(root);
  const state = await readState(layout);
  if (!state) throw new Error(`no local cluster in ${root}`);
  const ip = `127.42.0.${10 + state.nodes.length}`;
  const node: NodeSpec = { name, role: 'Worker', ip };
  const metadata = JSON.parse(await readFile(layout.metadataFile, 'utf8')) as { initSecretHash: string };
  await writeMetadataFile(layout.metadataFile, [...state.nodes, node], metadata.initSecretHash);
  state.nodes.push(await bootNode(layout, node, state.binDir, false, opts.tamper ?? false, state.runtime ?? 'sources'));
  await writeState(layout, state);
  return node;
}
