/**
 * Resident memory of every process of the real nodes (docs/adr/0019-node-runtime.md): the pids of
 * a node's cgroups, their VmRSS from /proc, named after the container they run (from the pods'
 * container IDs, which are the last component of a container's cgroup path) or after the program.
 * RSS counts shared pages once per process, so the sums are an upper bound.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { nodePids } from './cgroups.js';

/** One process: its pid, a readable name and its resident set in KiB. */
export interface ProcessMemory {
  pid: number;
  name: string;
  rssKiB: number;
}

/** One node's processes grouped by name, largest first, and the node's sum. */
export interface NodeMemory {
  node: string;
  groups: Array<{ name: string; count: number; rssKiB: number }>;
  totalKiB: number;
}

/**
 * The supervisor and the bootstrapper, recognised by their command line (node.sh first: its
 * arguments carry the bootstrapper's command).
 */
const PROGRAMS: Array<[RegExp, string]> = [
  [/local-cluster\/node\/node\.sh/, 'node.sh'],
  [/apps\/bootstrapper\/src\/main\.ts/, 'bootstrapper'],
];

/**
 * A process's name: the container it belongs to when `containers` knows the container ID in its
 * cgroup path, else a known program of the node, else its `comm`.
 */
export function processName(comm: string, args: string[], cgroupText: string, containers: ReadonlyMap<string, string>): string {
  for (const line of cgroupText.split('\n')) {
    const id = /\/([0-9a-f]{64})$/.exec(line.trim())?.[1];
    const name = id ? containers.get(id) : undefined;
    if (name) return name;
  }
  const command = args.join(' ');
  return PROGRAMS.find(([re]) => re.test(command))?.[1] ?? comm;
}

/** VmRSS and names of `pids`; processes that ended meanwhile (or kernel threads) are left out. */
export function processMemory(pids: number[], containers: ReadonlyMap<string, string>, proc = '/proc'): ProcessMemory[] {
  const out: ProcessMemory[] = [];
  for (const pid of pids) {
    try {
      const status = readFileSync(join(proc, String(pid), 'status'), 'utf8');
      const rss = /^VmRSS:\s+(\d+) kB$/m.exec(status);
      if (!rss) continue;
      const comm = readFileSync(join(proc, String(pid), 'comm'), 'utf8').trim();
      const args = readFileSync(join(proc, String(pid), 'cmdline'), 'utf8').split('\0');
      const cgroup = readFileSync(join(proc, String(pid), 'cgroup'), 'utf8');
      out.push({ pid, name: processName(comm, args, cgroup, containers), rssKiB: Number(rss[1]) });
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Groups a node's processes by name (largest sum first). */
export function groupByName(node: string, processes: ProcessMemory[]): NodeMemory {
  const groups = new Map<string, { name: string; count: number; rssKiB: number }>();
  for (const p of processes) {
    const g = groups.get(p.name) ?? { name: p.name, count: 0, rssKiB: 0 };
    g.count++;
    g.rssKiB += p.rssKiB;
    groups.set(p.name, g);
  }
  const sorted = [...groups.values()].sort((a, b) => b.rssKiB - a.rssKiB || a.name.localeCompare(b.name));
  return { node, groups: sorted, totalKiB: sorted.reduce((s, g) => s + g.rssKiB, 0) };
}

/** Container ID -> container name of every pod the API server knows (kubeconfig of the host). */
export async function containerNames(kubeconfig: string): Promise<Map<string, string>> {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const pods = await kc.makeApiClient(k8s.CoreV1Api).listPodForAllNamespaces();
  const names = new Map<string, string>();
  for (const pod of pods.items) {
    for (const c of pod.status?.containerStatuses ?? []) {
      const id = /^[a-z]+:\/\/([0-9a-f]{64})$/.exec(c.containerID ?? '')?.[1];
      if (id) names.set(id, c.name);
    }
  }
  return names;
}

/** The memory of every listed node (from its cgroups), named with the cluster's pods. */
export async function clusterMemory(kubeconfig: string, nodes: string[]): Promise<NodeMemory[]> {
  const containers = await containerNames(kubeconfig);
  return nodes.map((n) => groupByName(n, processMemory(nodePids(n), containers)));
}

/** One line per node (`node: total MiB = name[×count] MiB, ...`) and a total line. */
export function formatMemory(nodes: NodeMemory[]): string[] {
  const mib = (kib: number) => (kib / 1024).toFixed(kib < 10 * 1024 ? 1 : 0);
  const lines = nodes.map((n) => `${n.node}: ${mib(n.totalKiB)} MiB = ${n.groups.map((g) => `${g.name}${g.count > 1 ? `×${g.count}` : ''} ${mib(g.rssKiB)}`).join(', ')}`);
  lines.push(`total: ${mib(nodes.reduce((s, n) => s + n.totalKiB, 0))} MiB RSS over ${nodes.length} nodes`);
  return lines;
}
