/**
 * `up --backend kubeadm`: real nodes (docs/adr/0019-node-runtime.md). Each node is a network
 * namespace + mount namespace + cgroup with containerd, a kubelet and the bootstrapper
 * (`--k8s-backend=kubeadm`); node 0 is initialised by the real CLI, which then deploys the
 * services with Helm. Node roots carry no Kubernetes binaries: every node's bootstrapper installs
 * the chosen version's components, checked by hash, from the artifact server the tool starts on the
 * bridge (docs/protocol/components.md). Stages: host check -> artifacts -> images -> network ->
 * artifact server -> nodes -> forwards -> init -> wait for Ready.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { buildLocalImages, DEFAULT_IMAGE_DIR, helmPath, LOCAL_IMAGE_REPOSITORY, type ImageManifest } from '@asterism/deploy';
import { K8S_VERSION } from '@asterism/k8s-testenv';
import { versionRow } from '@asterism/versions';
import { artifactBaseUrl, prepareArtifacts, publishNodeImages, startArtifactServer, workloadImages } from './artifacts.js';
import { readState, runCliInit, TSX, waitForNodes, WORKSPACE_ROOT, writeState, type ClusterState } from '../cluster.js';
import { alive, startDetached, stopDetached } from '../detached.js';
import { newInitSecret } from '../init-secret.js';
import { ClusterLayout, planNodes, type NodeSpec } from '../layout.js';
import { createHostKey, createStateDisk, startSwtpm } from '../machine.js';
import { attestationConfigJson, measureBoot } from '../measured-boot.js';
import { writeMetadataFile } from '../metadata-file.js';
import { createNodeCgroups, destroyNodeCgroups } from './cgroups.js';
import { clusterMemory, formatMemory } from './memory.js';
import { startForward, type Forward } from './forwarder.js';
import { LocalNetwork, namespaceExists, NETWORK, nodeAddress } from './network.js';
import { NODE_TPM_SOCKET, writeNodeConfig } from './node-config.js';
import { bootEventsOf } from './image-measurements.js';
import type { VmSize } from './vm-node.js';
import { addVmNode, prepareVmImage, startMetadataApi, stopVmNodes } from './vm-workers.js';

/** Host port of the API server forward (kubectl/helm on the host use it). */
export const API_FORWARD_PORT = 16443;
/** Host port of the joinservice NodePort forward. */
export const JOIN_FORWARD_PORT = 30090;
/** NodePorts of the chart's verification-service Service on every real node's address (the reference's). */
export const VERIFY_GRPC_PORT = 30081;
export const VERIFY_HTTP_PORT = 30080;
const NODE_SCRIPT = join(WORKSPACE_ROOT, 'tools/local-cluster/node/node.sh');
const HOST_TOOLS = ['ip', 'nsenter', 'unshare', 'containerd', 'containerd-shim-runc-v2', 'runc', 'ctr', 'buildah', 'socat', 'iptables', 'conntrack'];

/** Options of {@link upReal}. */
export interface RealUpOptions {
  root: string;
  controlPlanes: number;
  workers: number;
  binDir: string;
  progress?: (line: string) => void;
  /** How long node 0 may take from start to Ready (default 5 min). */
  timeoutMs?: number;
  /** Nodes whose measured boot is tampered with (they must be refused). */
  tamper?: string[];
  /** Pass --skip-helm-wait to the CLI. */
  skipHelmWait?: boolean;
  /** Kubernetes version of the cluster (default: the newest supported, libs/versions). */
  kubernetesVersion?: string;
  /**
   * Every bootstrapper stays resident as its node's upgrade agent (`--upgrade-agent-port`,
   * docs/adr/0042-upgrade-agent.md), for `asterism upgrade apply` (./e2e/upgrade-checks.ts).
   */
  upgradeAgent?: boolean;
  /** VM workers booted from the node image (docs/adr/0039-vm-nodes-local-cluster.md). */
  vmWorkers?: number;
  /** The node image VMs boot (default: built into dist/local-cluster-image). */
  vmImage?: string;
  /** Prepare for VM nodes added later (addVmWorker) even with no VM worker now: the image's measurements become the cluster's. */
  vmReady?: boolean;
  /** Memory, vCPUs and state disk of each VM. */
  vmSize?: Partial<VmSize>;
  /** How long a VM worker may take from QEMU start to Ready (default 25 min: TCG). */
  vmTimeoutMs?: number;
}

/** Port of the nodes' upgrade agents when `upgradeAgent` is on. */
export const UPGRADE_AGENT_PORT = 9777;
/** Marker file in the cluster folder: its nodes (added and rebooted ones too) run the upgrade agent. */
const upgradeAgentMarker = (layout: ClusterLayout) => join(layout.root, 'upgrade-agent');

/** Refuses to start when a tool of the node runtime is missing, naming the setup step. */
export function checkHostTools(): void {
  const missing = HOST_TOOLS.filter((t) => {
    try {
      execFileSync('sh', ['-c', `command -v ${t}`], { stdio: 'ignore', env: { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/sbin:/sbin` } });
      return false;
    } catch {
      return true;
    }
  });
  if (!existsSync('/usr/lib/cni/bridge')) missing.push('containernetworking-plugins (/usr/lib/cni)');
  if (missing.length > 0) throw new Error(`the kubeadm backend needs ${missing.join(', ')}: run bash tools/scripts/setup.sh`);
}

/** Boots the real nodes, inits node 0 through the CLI (with Helm), waits until node 0 is Ready. */
export async function upReal(o: RealUpOptions): Promise<ClusterState> {
  const say = o.progress ?? (() => undefined);
  if (o.controlPlanes < 1 || o.workers < 0 || o.controlPlanes + o.workers > 20) throw new Error('want 1-20 nodes with at least one control plane');
  checkHostTools();
  const layout = new ClusterLayout(o.root);
  const existing = await readState(layout);
  if (existing?.nodes.some((n) => alive(n.bootstrapper)) || namespaceExists(NETWORK.routerNamespace)) {
    throw new ClusterBusyError(`a local cluster is already running (${layout.root} or network ${NETWORK.routerNamespace}); run "down" first`);
  }
  await rm(layout.root, { recursive: true, force: true });
  await mkdir(layout.workspace, { recursive: true, mode: 0o700 });
  const version = versionRow(o.kubernetesVersion ?? '').kubernetesVersion;
  const k8sBinDir = await stage(say, `artifacts of Kubernetes ${version}`, () => prepareArtifacts(version, o.binDir, (l) => say(`  ${l}`)));
  const images = await stage(say, 'images', () =>
    buildLocalImages({ k8sBinDir, kubernetesVersion: version, ...(version === K8S_VERSION ? {} : { outDir: join(DEFAULT_IMAGE_DIR, version) }), progress: (l) => say(`  ${l}`) }),
  );
  const overlayFile = await stage(say, 'publish images to the artifact server folder', () => publishNodeImages(layout, version, images));
  const nodes = planNodes(o.controlPlanes, o.workers, NETWORK.prefix);
  const { secret, hash } = await newInitSecret();
  await writeFile(layout.initSecretFile, secret, { mode: 0o600 });
  await writeMetadataFile(layout.metadataFile, nodes, hash);
  await writeFile(layout.attestationConfigFile, attestationConfigJson(), { mode: 0o600 });
  if (o.upgradeAgent) await writeFile(upgradeAgentMarker(layout), `${UPGRADE_AGENT_PORT}\n`);
  const vmNames = Array.from({ length: o.vmWorkers ?? 0 }, (_, i) => `vm-worker-${i}`);
  // With VM nodes the image's predicted measurements are the cluster's, replayed by the namespace nodes.
  const vmImage = vmNames.length > 0 || o.vmReady ? await stage(say, 'node image and its predicted measurements', () => prepareVmImage(layout, say, o.vmImage)) : undefined;
  const state: ClusterState = { created: new Date().toISOString(), binDir: k8sBinDir, backend: 'kubeadm', nodes: [], planned: [...nodes.map((n) => n.name), ...vmNames], networkClaimed: false, forwards: [], kubernetesVersion: version, ...(vmImage ? { vmImage } : {}) };
  await writeState(layout, state);
  const network = new LocalNetwork();
  await stage(say, 'network', async () => {
    // Creating the router namespace is the machine-wide claim: it fails if another `up` won.
    await network.createRouter().catch((err: unknown) => {
      throw new ClusterBusyError(`another local cluster holds the network ${NETWORK.routerNamespace}: ${(err as Error).message}`);
    });
    state.networkClaimed = true;
    await writeState(layout, state);
    for (const [i, n] of nodes.entries()) await network.addNode(nodeAddress(n.name, i));
  });
  const server = await stage(say, 'artifact server', () => startArtifactServer(layout));
  state.forwards!.push(server);
  await writeState(layout, state);
  for (const [i, node] of nodes.entries()) {
    const tamper = o.tamper?.includes(node.name) ?? false;
    state.nodes.push(await stage(say, `boot ${node.name}${tamper ? ' (TAMPERED measured boot)' : ''}`, () => bootRealNode(layout, node, i, images, tamper)));
    await writeState(layout, state);
  }
  if (vmImage && vmNames.length > 0) await stage(say, `boot ${vmNames.join(', ')} (QEMU, TCG)`, () => bootVmWorkers(layout, state, vmNames, vmImage, o.vmSize));
  const forwards = await startForwards(layout, nodes[0]!);
  state.forwards = [...state.forwards!, ...forwards.map((f) => ({ name: f.name, hostPort: f.hostPort, pids: f.pids }))];
  await writeState(layout, state);
  const values = join(layout.root, 'helm-values.yaml');
  // JSON is YAML: helm reads it as a values file.
  await writeFile(values, JSON.stringify(localHelmValues(nodes[0]!, vmImage !== undefined), null, 2), { mode: 0o600 });
  await stage(say, 'asterism init + helm', () =>
    runCliInit(layout, nodes[0]!, say, {
      wrapper: ['nsenter', `--net=/run/netns/${NETWORK.routerNamespace}`],
      args: ['--conformance', `--kubernetes-version=${version}`, `--artifact-base-url=${artifactBaseUrl()}`, `--image-overlay=${overlayFile}`, `--helm-values=${values}`, `--helm=${helmPath()}`, `--image-repository=${LOCAL_IMAGE_REPOSITORY}`, ...(o.skipHelmWait ? ['--skip-helm-wait'] : [])],
    }),
  );
  await writeHostKubeconfig(layout);
  const names = nodes.filter((n) => !o.tamper?.includes(n.name)).map((n) => n.name);
  await stage(say, 'nodes bootstrapped (init / join by attestation)', () => waitForNodes(layout, names, o.timeoutMs ?? 300_000, say, layout.hostKubeconfig));
  await stage(say, 'nodes Ready (kubelets)', () => Promise.all(names.map((n) => waitForReady(layout.hostKubeconfig, n, o.timeoutMs ?? 300_000))));
  for (const line of formatMemory(await clusterMemory(layout.hostKubeconfig, nodes.map((n) => n.name)))) say(`memory (RSS) ${line}`);
  if (vmNames.length > 0) await stage(say, 'VM workers Ready (attested, joined)', () => Promise.all(vmNames.map((n) => waitForReady(layout.hostKubeconfig, n, o.vmTimeoutMs ?? 25 * 60_000))));
  return state;
}

/** One node: vTPM with measured boot, LUKS2 image, host key, node config, cgroups, supervisor. */
export async function bootRealNode(layout: ClusterLayout, node: NodeSpec, index: number, images: ImageManifest, tamper = false): Promise<ClusterState['nodes'][number]> {
  await mkdir(layout.nodeRoot(node.name), { recursive: true, mode: 0o700 });
  const swtpm = await startSwtpm(layout, node.name);
  await measureBoot(layout.tpmSocket(node.name), { tamper, ...(await bootEventsOf(layout)) });
  await createStateDisk(layout, node.name);
  // The node sees its own /run, which layout.nodeRoot()/run backs; /var/run is a link to it.
  await createHostKey(layout, node.name, 'run/state/ssh');
  const supervisor = await startNodeSupervisor(layout, node, index, images);
  return { ...node, swtpm: swtpm.pid, bootstrapper: supervisor, ...(tamper ? { tampered: true } : {}) };
}

/**
 * Cgroups, config files and the node's supervisor (node.sh); returns the supervisor's pid. The node
 * gets no Kubernetes binary: its bootstrapper installs them from the init request or its ticket.
 */
export async function startNodeSupervisor(layout: ClusterLayout, node: NodeSpec, index: number, images: ImageManifest): Promise<number> {
  const address = nodeAddress(node.name, index);
  const cgroupDirs = await createNodeCgroups(node.name);
  // Kubernetes and service images come with the components (the installer imports them, checked by
  // digest); the supervisor only loads the workload images (busybox) for the tests' pods.
  const archives = workloadImages(images).filter((i) => i.nodes === 'all' || node.role === 'ControlPlane').map((i) => i.archive);
  const pause = images.images.find((i) => i.name === 'pause');
  if (!pause) throw new Error('the image catalog has no pause image');
  await writeNodeConfig(layout.nodeDir(node.name), { node: address, tpmSocket: layout.tpmSocket(node.name), sandboxImage: pause.ref, images: archives, cgroupDirs });
  return startDetached('node', 'bash', [NODE_SCRIPT, 'enter', layout.nodeDir(node.name), '--', process.execPath, '--import', TSX, ...bootstrapperArgs(layout, node)], layout.log(node.name, 'node'), { cwd: WORKSPACE_ROOT }).pid;
}

/** The bootstrapper as a VM image would run it, with the node runtime's differences as flags. */
function bootstrapperArgs(layout: ClusterLayout, node: NodeSpec): string[] {
  return [
    join(WORKSPACE_ROOT, 'apps/bootstrapper/src/main.ts'),
    '--attestation-variant=qemu-vtpm',
    '--csp=QEMU',
    `--tpm=unix:${layout.tpmSocket(node.name)}`,
    `--state-disk=${layout.diskImage(node.name)}`,
    `--initial-key=${layout.diskKey(node.name)}`,
    `--metadata=file:${layout.metadataFile}`,
    `--node-name=${node.name}`,
    '--k8s-backend=kubeadm',
    // No --k8s-bin-dir: kubeadm is /run/state/bin/kubeadm, installed from the components.
    '--init-system=none',
    `--image-repository=${LOCAL_IMAGE_REPOSITORY}`,
    // ImagePull: kubeadm pre-pulls CoreDNS although init skips the CoreDNS addon (as the
    // reference does), and no CoreDNS image is built here (ADR 0018). SystemVerification: kubeadm
    // v1.35 refuses cgroup v1 hosts (these machines mount cgroups in hybrid mode); the kubelet
    // patch sets failCgroupV1: false to match (docs/adr/0034-components-by-version.md).
    '--ignore-preflight-errors=ImagePull,SystemVerification',
    // A network namespace cannot raise the kernel's conntrack limit (kube-proxy would exit).
    '--kube-proxy-conntrack-max-per-core=0',
    `--log-file=${layout.log(node.name, 'bootstrapper.json')}`,
    `--address=${node.ip}`,
    // No --verify-grpc-port: the chart's verification-service DaemonSet serves every node, so the
    // bootstrapper exits once the node is bootstrapped (docs/adr/0028), unless it is the node's
    // upgrade agent.
    ...(existsSync(upgradeAgentMarker(layout)) ? [`--upgrade-agent-port=${UPGRADE_AGENT_PORT}`] : []),
  ];
}

/** The label the node image's kubelet registers with (tools/image/rootfs kubelet.service): its TPM is /dev/tpmrm0. */
export const VM_TPM_LABEL = 'asterism.dev/tpm';

/**
 * The chart values the local network needs: no cluster DNS, so the joinservice reaches the
 * keyservice through the Service environment; tickets name node 0's API server directly; the
 * verification service reaches each namespace node's vTPM at NODE_TPM_SOCKET, and with VM nodes a
 * second DaemonSet reaches theirs at /dev/tpmrm0 (the image's kubelet labels its node
 * asterism.dev/tpm=device).
 */
export function localHelmValues(first: NodeSpec, vmNodes = false): Record<string, unknown> {
  return {
    joinservice: {
      keyServiceEndpoint: '$(KEY_SERVICE_SERVICE_HOST):$(KEY_SERVICE_SERVICE_PORT)',
      // A control plane's NodePort reaches only its own joinservice pod: the control plane a
      // joining node dials (from metadata, one after the other) is the one that serves it, and a
      // control plane without a ready pod drops the connection (docs/adr/0019-node-runtime.md).
      joinServiceExternalTrafficPolicy: 'Local',
      // The pod has no metadata source for the nodes (no qemu metadata API, the metadata file is
      // on the host), so it cannot name peers by IP (docs/adr/0008 "Real-node local cluster"):
      // the reference behaviour until it can.
      identityBinding: 'off',
      extraArgs: [`--api-server-endpoint=${first.ip}:6443`],
    },
    // The node's vTPM is a swtpm socket, bind-mounted by node.sh at the same path on every node;
    // measured boot is simulated, so there is no firmware event log to mount.
    verificationservice: {
      tpm: { kind: 'socket', hostPath: NODE_TPM_SOCKET },
      firmwareEventLog: false,
      ...(vmNodes ? { tpmOverride: { nodeSelector: { [VM_TPM_LABEL]: 'device' }, kind: 'device', hostPath: '/dev/tpmrm0' } } : {}),
    },
    // Continuous attestation (docs/protocol/continuous-attestation.md): no cluster DNS here, so the
    // keyservice by its Service environment; a short interval. One replica (~100 MiB each) and a
    // grace period longer than a node's reboot and rejoin in the fault scenarios (an unreachable
    // node would otherwise be quarantined mid-test; readmission is an operator's act).
    attestationmonitor: { keyServiceEndpoint: '$(KEY_SERVICE_SERVICE_HOST):$(KEY_SERVICE_SERVICE_PORT)', intervalSeconds: 20, graceSeconds: 300, replicas: 1 },
  };
}

async function startForwards(layout: ClusterLayout, first: NodeSpec): Promise<Forward[]> {
  const mk = (name: string, hostPort: number, target: string) => startForward({ name, hostPort, target, socket: join(layout.root, `${name}.sock`), log: join(layout.root, `forward-${name}.log`) });
  return [await mk('apiserver', API_FORWARD_PORT, `${first.ip}:6443`), await mk('joinservice', JOIN_FORWARD_PORT, `${first.ip}:30090`), await mk('verification', VERIFY_GRPC_PORT, `${first.ip}:${VERIFY_GRPC_PORT}`)];
}

/** The CLI's kubeconfig with the server replaced by the host's forward. */
async function writeHostKubeconfig(layout: ClusterLayout): Promise<void> {
  const text = await readFile(layout.kubeconfig, 'utf8');
  await writeFile(layout.hostKubeconfig, text.replace(/server: https:\/\/[^\s]+/g, `server: https://127.0.0.1:${API_FORWARD_PORT}`), { mode: 0o600 });
}

/** Starts the metadata API, then boots each VM worker (after the namespace nodes: the metadata file names them all). */
async function bootVmWorkers(layout: ClusterLayout, state: ClusterState, names: string[], image: string, size?: Partial<VmSize>): Promise<void> {
  await startMetadataApi(layout, state);
  for (const name of names) {
    await addVmNode(layout, state, { name, role: 'Worker', ip: '' }, state.nodes.length, { image, ...(size ? { size } : {}) });
    await writeState(layout, state);
  }
}

/** Waits until the kubelet reports the node Ready. */
export async function waitForReady(kubeconfig: string, name: string, timeoutMs: number): Promise<void> {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const node = await core.readNode({ name }).catch(() => undefined);
    if (node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return;
    if (Date.now() > deadline) throw new Error(`node ${name} not Ready after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Thrown by {@link upReal} when another real cluster (any checkout) holds the network. */
export class ClusterBusyError extends Error {}

/**
 * `down` of the kubeadm backend: every process in the cluster's node cgroups (supervisors,
 * containerd, shims, containers, kubelets, bootstrappers), the forwards and vTPMs, the namespaces
 * (their veths and mounts go with them), the cgroups, and the cluster folder. Only what this
 * folder's state names is touched, so a cluster of another checkout survives; `orphans: true`
 * (the CLI's `down` without a state file) also removes what a crashed `up` left on this machine.
 */
export async function downReal(root: string, opts: { keep?: boolean; orphans?: boolean } = {}): Promise<number> {
  const layout = new ClusterLayout(root);
  const state = await readState(layout);
  let stopped = 0;
  const stop = async (pid: number, graceMs: number) => {
    if (pid <= 0 || !alive(pid)) return;
    stopped++;
    await stopDetached(pid, graceMs);
  };
  for (const f of state?.forwards ?? []) for (const pid of f.pids) await stop(pid, 2000);
  stopped += await stopVmNodes(state);
  // QEMUs of VMs whose boot failed before the state recorded them.
  for (const pid of processesMentioning(layout.root, 'qemu-system-x86_64')) await stop(pid, 3000);
  // A cluster whose `up` lost the network to another never created its planned nodes: those names are the other cluster's.
  const claimed = state?.networkClaimed !== false;
  const planned = claimed ? (state?.planned ?? []) : [];
  const nodeNames = new Set([...(state?.nodes ?? []).map((n) => n.name), ...planned, ...(opts.orphans ? leftoverNodeCgroups() : [])]);
  for (const name of nodeNames) stopped += await destroyNodeCgroups(name);
  for (const n of state?.nodes ?? []) await stop(n.swtpm, 5000);
  // vTPMs of nodes whose boot failed before the state recorded them.
  for (const pid of processesMentioning(layout.root, 'swtpm')) await stop(pid, 5000);
  const ours = (ns: string) => opts.orphans || [...nodeNames].some((n) => nodeAddress(n, 0).namespace === ns);
  const namespaces = readdirSafe('/run/netns').filter((ns) => ns.startsWith(NETWORK.nodeNamespacePrefix) && ns !== NETWORK.routerNamespace && ours(ns));
  await new LocalNetwork().removeAll(namespaces, (state !== undefined && claimed) || opts.orphans === true);
  if (!opts.keep) await rm(layout.root, { recursive: true, force: true });
  return stopped;
}

function leftoverNodeCgroups(): string[] {
  const roots = ['/sys/fs/cgroup/pids/asterism', '/sys/fs/cgroup/asterism'];
  // Node cgroups are the folders; the rest are the controller's files (tasks, cgroup.procs, ...).
  return roots.flatMap((r) => readdirSafe(r).filter((n) => statSafeIsDir(join(r, n))));
}

/** Pids of `command` processes whose arguments mention `text`. */
function processesMentioning(text: string, command: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSafe('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args[0]?.endsWith(command) && args.some((a) => a.includes(text))) pids.push(Number(entry));
    } catch {
      /* gone */
    }
  }
  return pids;
}

function statSafeIsDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

async function stage<T>(say: (l: string) => void, name: string, fn: () => Promise<T>): Promise<T> {
  const started = Date.now();
  say(`${name}...`);
  const result = await fn();
  say(`${name}: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return result;
}
