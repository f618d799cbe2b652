#!/usr/bin/env node
/** tools/local-cluster: the main job. `up` boots an attested cluster on this machine, `status` shows it, `down` removes it. */
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import * as k8s from '@kubernetes/client-node';
import { binDir } from '@asterism/k8s-testenv';
import { parseArgs } from 'node:util';
import { alive } from './detached.js';
import { ClusterLayout } from './layout.js';
import { down, nodeObjects, readNodeStatus, readState, up, WORKSPACE_ROOT } from './cluster.js';
import { memorySummary, sessionProcesses, type ClusterProcess } from './processes.js';
import { NETWORK } from './real/network.js';
import { downReal, upReal } from './real/real-cluster.js';
import { imagesOnNodes, loadImageOnNodes } from './real/load-image.js';
import { supportedKubernetesVersions } from '@asterism/versions';

const USAGE = `Usage: local-cluster <up|status|down|images|load-image> [flags]

  up       boot nodes (each: swtpm vTPM with measured boot, LUKS2 state disk, bootstrapper; with the
           kubeadm backend also its own namespaces, cgroup, containerd and kubelet), run
           "asterism init" against the first node over aTLS (then Helm), wait for every node
  status   show the nodes, their processes and bootstrap state, and (local backend) the memory
           of every process of the cluster
  down     stop everything and delete the cluster folder (--keep keeps it)
  images   (kubeadm) the image names pods can use without a registry (on the first node)
  load-image <archive>
           (kubeadm) import an OCI/docker image archive into every node's containerd; name the
           image localhost/<name>:<tag> and use it with imagePullPolicy IfNotPresent

Flags:
  --dir <dir>             cluster folder (default .local-cluster in the workspace)
  --control-planes <n>    (up) control-plane nodes, default 1 (local backend: only the first runs a
                          control plane; kubeadm: every one joins etcd and runs its own)
  --workers <n>           (up) worker nodes, default 2
  --bin-dir <dir>         (up) Kubernetes binaries (default: tools/k8s-testenv's build cache)
  --kubernetes-version <v> (up, kubeadm) the cluster's Kubernetes version (default: the newest;
                          supported: ${supportedKubernetesVersions().join(', ')}). Nodes carry no
                          Kubernetes binary: each installs that version's components, checked by
                          hash, from the tool's artifact server (docs/protocol/components.md)
  --backend <b>           (up) kubeadm (default): real nodes (network + mount namespace and cgroup
                          each, containerd, kubelet, kubeadm init/join, services as Helm pods);
                          local: simulated kubelets, control plane as host processes, faster.
                          See docs/adr/0005 and 0019.
  --skip-helm-wait        (up, kubeadm) do not wait for the service pods (debugging)
  --upgrade-agent         (up, kubeadm) every bootstrapper stays as its node's upgrade agent
                          (port 9777) for "asterism upgrade apply" (docs/adr/0042-upgrade-agent.md)
  --tamper <node>         (up) boot this node with a tampered measurement (it must be refused)
  --vm-workers <n>        (up, kubeadm) also boot n workers as QEMU VMs of the node image (TCG:
                          minutes each; docs/adr/0039); the image's predicted measurements become
                          the cluster's. Serial console: <dir>/nodes/vm-worker-<i>/console.log
  --vm-image <file>       (up) the node image the VMs boot (default: built into dist/local-cluster-image)
  --vm-memory <MiB>       (up) memory of each VM (default 2048)
  --keep                  (down) keep the cluster folder`;

async function printTable(root: string): Promise<void> {
  const layout = new ClusterLayout(root);
  const state = await readState(layout);
  if (!state) {
    process.stdout.write(`no local cluster in ${layout.root}\n`);
    return;
  }
  const kubeconfig = state.backend === 'kubeadm' ? layout.hostKubeconfig : layout.kubeconfig;
  const objects = await nodeObjects(layout, kubeconfig).catch(() => [] as string[]);
  const kubelets = state.backend === 'kubeadm' ? await kubeletColumn(kubeconfig) : new Map<string, string>();
  const local = state.backend !== 'kubeadm';
  const rows = [['NODE', 'ROLE', 'IP', 'VARIANT', 'PHASE', 'PCR15', 'JOIN TIME', 'NODE OBJECT', 'KUBELET / RUNTIME', 'PROCESSES', ...(local ? ['RSS'] : [])]];
  const all: ClusterProcess[] = [];
  for (const n of state.nodes) {
    const s = await readNodeStatus(layout, n.name);
    const procs = local ? sessionProcesses([n.bootstrapper, n.swtpm]) : [];
    all.push(...procs);
    rows.push([
      n.name,
      n.role,
      n.ip,
      'qemu-vtpm',
      s?.phase ?? '-',
      s?.pcr15 ? `${s.pcr15.slice(0, 16)}...` : '-',
      s?.bootstrapMs !== undefined ? `${(s.bootstrapMs / 1000).toFixed(1)} s` : '-',
      objects.includes(n.name) ? 'yes' : 'no',
      state.backend === 'kubeadm' ? (kubelets.get(n.name) ?? '-') : 'simulated',
      local ? processColumn(n.bootstrapper, procs) : `${n.vm ? 'VM ' : ''}${alive(n.bootstrapper) ? 'up' : 'down'}/${alive(n.swtpm) ? 'tpm' : 'no tpm'}`,
      ...(local ? [`${mb(memorySummary(procs).rssBytes)} MB`] : []),
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) process.stdout.write(`${r.map((c, i) => c.padEnd(widths[i]!)).join('  ')}\n`);
  if (local) process.stdout.write(`\n${memoryLine(all)}\n`);
  for (const n of state.nodes.filter((x) => x.vm)) process.stdout.write(`${n.name}: QEMU VM, ${n.vm!.memoryMiB} MiB, tap ${n.vm!.tap}, serial console ${join(layout.nodeDir(n.name), 'console.log')}\n`);
  process.stdout.write(`\nkubeconfig: ${kubeconfig}\n`);
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

/** Local backend: the bootstrapper's state (it exits once it has nothing to supervise) and the node's other processes. */
function processColumn(bootstrapper: number, procs: ClusterProcess[]): string {
  const others = procs.filter((p) => p.kind !== 'bootstrapper').map((p) => p.kind);
  return `bootstrapper ${alive(bootstrapper) ? 'up' : 'exited'}${others.length ? `, ${others.join(', ')}` : ''}`;
}

/** The cluster's memory: RSS and PSS summed over every process, and per kind. */
function memoryLine(procs: ClusterProcess[]): string {
  const m = memorySummary(procs);
  const kinds = Object.entries(m.byKind).map(([k, v]) => `${k} ${v.count} x ${mb(v.rssBytes / v.count)} MB`);
  return `memory: ${procs.length} processes, RSS ${mb(m.rssBytes)} MB, PSS ${mb(m.pssBytes)} MB (${kinds.join('; ')})`;
}

/** Per node: the kubelet's Ready condition, its version and the container runtime it reports. */
async function kubeletColumn(kubeconfig: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  try {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfig);
    for (const n of (await kc.makeApiClient(k8s.CoreV1Api).listNode()).items) {
      const ready = n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? 'Ready' : 'NotReady';
      const info = n.status?.nodeInfo;
      out.set(n.metadata?.name ?? '', `${ready} kubelet ${info?.kubeletVersion ?? '?'} ${info?.containerRuntimeVersion ?? '?'}`);
    }
  } catch {
    /* API not reachable: the column stays empty */
  }
  return out;
}

/** Parses the flags after the command (strict: unknown flags are errors). */
function parseFlags(rest: string[]) {
  const { values, positionals } = parseArgs({
    args: rest,
    strict: true,
    allowPositionals: true,
    options: {
      dir: { type: 'string' },
      'control-planes': { type: 'string' },
      workers: { type: 'string' },
      'bin-dir': { type: 'string' },
      'kubernetes-version': { type: 'string' },
      tamper: { type: 'string', multiple: true },
      'vm-workers': { type: 'string' },
      'vm-image': { type: 'string' },
      'vm-memory': { type: 'string' },
      backend: { type: 'string' },
      'skip-helm-wait': { type: 'boolean' },
      'upgrade-agent': { type: 'boolean' },
      keep: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  return { ...values, positionals };
}

type Flags = ReturnType<typeof parseFlags>;

/** `up`: starts the cluster with the chosen backend (kubeadm by default), then prints the table. */
async function upCommand(values: Flags, root: string, say: (l: string) => void): Promise<number> {
  const started = Date.now();
  const backend = values.backend ?? 'kubeadm';
  if (backend !== 'local' && backend !== 'kubeadm') throw new Error(`unknown --backend "${backend}": want local or kubeadm`);
  if (backend === 'kubeadm') {
    await upReal({
      root,
      controlPlanes: Number(values['control-planes'] ?? 1),
      workers: Number(values.workers ?? 2),
      binDir: values['bin-dir'] ?? binDir(),
      skipHelmWait: values['skip-helm-wait'] ?? false,
      upgradeAgent: values['upgrade-agent'] ?? false,
      ...(values['kubernetes-version'] ? { kubernetesVersion: values['kubernetes-version'] } : {}),
      ...(values.tamper ? { tamper: values.tamper } : {}),
      ...(values['vm-workers'] ? { vmWorkers: positiveInt('--vm-workers', values['vm-workers']) } : {}),
      ...(values['vm-image'] ? { vmImage: values['vm-image'] } : {}),
      ...(values['vm-memory'] ? { vmSize: { memoryMiB: positiveInt('--vm-memory', values['vm-memory']) } } : {}),
      progress: say,
    });
  } else {
    await up({
      root,
      controlPlanes: Number(values['control-planes'] ?? 1),
      workers: Number(values.workers ?? 2),
      binDir: values['bin-dir'] ?? binDir(),
      ...(values.tamper ? { tamper: values.tamper } : {}),
      progress: say,
    });
  }
  say(`cluster up in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  await printTable(root);
  return 0;
}

/** A flag's value as a whole number >= 1 (an error naming the flag otherwise). */
function positiveInt(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} wants a whole number >= 1, got "${value}"`);
  return n;
}

/** `down`: stops the cluster's processes and (unless --keep) removes its folder. */
async function downCommand(values: Flags, root: string, say: (l: string) => void): Promise<number> {
  const state = await readState(new ClusterLayout(root));
  // The folder's state decides; without one, leftovers of a crashed kubeadm `up` are cleaned.
  const real = state ? state.backend === 'kubeadm' : existsSync(`/run/netns/${NETWORK.routerNamespace}`);
  const n = real ? await downReal(root, { keep: values.keep ?? false, orphans: !state }) : await down(root, { keep: values.keep ?? false });
  say(`stopped ${n} processes${values.keep ? '' : `, removed ${root}`}`);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const values = parseFlags(rest);
  const root = values.dir ?? join(WORKSPACE_ROOT, '.local-cluster');
  if (values.help || !command || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return command ? 0 : 2;
  }
  const say = (l: string) => process.stderr.write(`${l}\n`);
  switch (command) {
    case 'up':
      return upCommand(values, root, say);
    case 'status':
      await printTable(root);
      return 0;
    case 'down':
      return downCommand(values, root, say);
    case 'images':
      for (const name of await imagesOnNodes(root)) process.stdout.write(`${name}\n`);
      return 0;
    case 'load-image': {
      const archive = values.positionals[0];
      if (!archive) throw new Error('load-image needs the archive: local-cluster load-image <file.tar>');
      await loadImageOnNodes(root, archive, say);
      return 0;
    }
    default:
      process.stderr.write(`local-cluster: unknown command "${command}"\n\n${USAGE}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    process.stderr.write(`local-cluster: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
