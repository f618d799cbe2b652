/**
 * Per-node cgroups (docs/adr/0019-node-runtime.md). Each node's supervisor joins
 * `<controller>/asterism/<node>` in every cgroup-v1 controller the kubelet uses (or
 * `asterism/<node>` on a cgroup-v2 host); the kubelet's `cgroupRoot` is that path, so every
 * process of the node, pods included, lives below it and `down` can find and kill all of them.
 */
import { existsSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

const CGROUP_ROOT = '/sys/fs/cgroup';
const V1_CONTROLLERS = ['blkio', 'cpu', 'cpuacct', 'cpuset', 'devices', 'freezer', 'memory', 'pids', 'systemd'];

/** The kubelet's `cgroupRoot` for a node. */
export function nodeCgroupRoot(node: string): string {
  return `/asterism/${node}`;
}

/** Whether the host runs the unified (v2-only) hierarchy. */
export function unifiedHierarchy(): boolean {
  return existsSync(join(CGROUP_ROOT, 'cgroup.controllers'));
}

/** The cgroup folders of a node, one per hierarchy. */
export function nodeCgroupDirs(node: string): string[] {
  if (unifiedHierarchy()) return [join(CGROUP_ROOT, 'asterism', node)];
  return V1_CONTROLLERS.map((c) => join(CGROUP_ROOT, c, 'asterism', node)).filter((d) => existsSync(join(d, '..', '..')));
}

/** Creates the node's cgroups (cpuset needs its cpus/mems before a task may join). */
export async function createNodeCgroups(node: string): Promise<string[]> {
  const dirs = nodeCgroupDirs(node);
  for (const dir of dirs) await mkdir(dir, { recursive: true });
  if (unifiedHierarchy()) {
    const controllers = readFileSync(join(CGROUP_ROOT, 'cgroup.controllers'), 'utf8').trim().split(/\s+/).map((c) => `+${c}`).join(' ');
    for (const dir of [CGROUP_ROOT, join(CGROUP_ROOT, 'asterism')]) writeFileSync(join(dir, 'cgroup.subtree_control'), controllers);
  } else {
    const cpuset = join(CGROUP_ROOT, 'cpuset');
    for (const dir of [join(cpuset, 'asterism'), join(cpuset, 'asterism', node)]) {
      for (const f of ['cpuset.cpus', 'cpuset.mems']) writeFileSync(join(dir, f), readFileSync(join(cpuset, f)));
    }
  }
  return dirs;
}

/** Every pid in a cgroup folder and its descendants. */
export function cgroupPids(dir: string): number[] {
  if (!existsSync(dir)) return [];
  const pids = readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  for (const entry of readdirSync(dir)) {
    const child = join(dir, entry);
    if (statSync(child).isDirectory()) pids.push(...cgroupPids(child));
  }
  return pids;
}

/** Pids of every process of a node (all hierarchies, deduplicated). */
export function nodePids(node: string): number[] {
  return [...new Set(nodeCgroupDirs(node).flatMap(cgroupPids))];
}

/**
 * Kills every process of the node (SIGKILL, repeated until none is left: containers may still be
 * forking) and removes its cgroup folders depth first. Returns how many processes it killed.
 */
export async function destroyNodeCgroups(node: string, timeoutMs = 20_000): Promise<number> {
  const killed = new Set<number>();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pids = nodePids(node);
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.add(pid);
      } catch {
        /* already gone */
      }
    }
    if (Date.now() > deadline) throw new Error(`processes of ${node} survive SIGKILL: ${pids.join(' ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const dir of nodeCgroupDirs(node)) await removeTree(dir, deadline);
  for (const dir of nodeCgroupDirs(node).map((d) => join(d, '..'))) tryRmdir(dir);
  return killed.size;
}

async function removeTree(dir: string, deadline: number): Promise<void> {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir)) {
    const child = join(dir, entry);
    if (statSync(child).isDirectory()) await removeTree(child, deadline);
  }
  // A cgroup whose last task just died can stay busy for a moment.
  while (!tryRmdir(dir)) {
    if (Date.now() > deadline) throw new Error(`cannot remove cgroup ${dir}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function tryRmdir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
