/**
 * The processes of a local cluster and their memory, from /proc (Linux). A node's processes are
 * the sessions `up` started for it: its bootstrapper's (control plane, services, a
 * verification-service program; they stay after the bootstrapper exits) and its swtpm's.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** What a process of the cluster is, from its command line. */
export type ProcessKind = 'bootstrapper' | 'keyservice' | 'joinservice' | 'verification-service' | 'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'swtpm' | 'other';

/** One process and its memory (bytes). PSS shares pages (the node binary, libraries) among the processes that map them. */
export interface ClusterProcess {
  pid: number;
  kind: ProcessKind;
  rssBytes: number;
  pssBytes: number;
}

const KINDS: Array<[ProcessKind, RegExp]> = [
  ['verification-service', /verification-service/],
  ['bootstrapper', /bootstrapper\/(main\.mjs|src\/main\.ts)|simulated-node\/main\.ts/],
  ['keyservice', /keyservice\/(main\.mjs|src\/main\.ts)/],
  ['joinservice', /joinservice\/(main\.mjs|src\/main\.ts)/],
  ['kube-apiserver', /kube-apiserver/],
  ['kube-controller-manager', /kube-controller-manager/],
  ['etcd', /(^|\/)etcd(\0|$)/],
  ['swtpm', /(^|\/)swtpm(\0|$)/],
];

/** Session id (field 6 of /proc/<pid>/stat), or undefined once the process is gone. */
function sessionOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' ? undefined : Number(fields[3]);
  } catch {
    return undefined;
  }
}

/** `Name: <n> kB` of a /proc file, in bytes (0 when absent or gone). */
function kbField(path: string, name: string): number {
  try {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(path, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function kindOf(pid: number): ProcessKind {
  let cmdline = '';
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return 'other';
  }
  return KINDS.find(([, re]) => re.test(cmdline))?.[0] ?? 'other';
}

/** Every live process in the given sessions (the session leaders may have exited). */
export function sessionProcesses(sessions: readonly number[]): ClusterProcess[] {
  const wanted = new Set(sessions);
  const out: ClusterProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const sid = sessionOf(pid);
    if (sid === undefined || !wanted.has(sid)) continue;
    out.push({ pid, kind: kindOf(pid), rssBytes: kbField(`/proc/${pid}/status`, 'VmRSS'), pssBytes: kbField(`/proc/${pid}/smaps_rollup`, 'Pss') });
  }
  return out;
}

/** Totals and per-kind sums (bytes) of a set of processes. */
export function memorySummary(procs: readonly ClusterProcess[]): { rssBytes: number; pssBytes: number; byKind: Partial<Record<ProcessKind, { count: number; rssBytes: number; pssBytes: number }>> } {
  const byKind: Partial<Record<ProcessKind, { count: number; rssBytes: number; pssBytes: number }>> = {};
  for (const p of procs) {
    const k = (byKind[p.kind] ??= { count: 0, rssBytes: 0, pssBytes: 0 });
    k.count++;
    k.rssBytes += p.rssBytes;
    k.pssBytes += p.pssBytes;
  }
  return { rssBytes: procs.reduce((s, p) => s + p.rssBytes, 0), pssBytes: procs.reduce((s, p) => s + p.pssBytes, 0), byKind };
}
