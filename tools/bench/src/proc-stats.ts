/** CPU time and memory of a process and its descendants, read from /proc (Linux). */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ is 100 on Linux). */
const USER_HZ = 100;

/** The pid and all its descendants (children first found via /proc/<pid>/task/<tid>/children). */
export function processTree(pid: number): number[] {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const p = queue.shift()!;
    out.push(p);
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      continue;
    }
    for (const t of tasks) {
      try {
        const children = readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').trim();
        if (children !== '') queue.push(...children.split(/\s+/).map(Number));
      } catch {
        // the task ended meanwhile
      }
    }
  }
  return out;
}

/** User + system CPU milliseconds consumed so far by the pid (0 once it is gone). */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
  } catch {
    return 0;
  }
}

/** Resident set size in bytes of the pid (0 once it is gone). */
export function rssBytes(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** CPU milliseconds of the whole tree below pid. */
export function treeCpuMs(pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + cpuMs(p), 0);
}

/** Summed RSS in bytes of the whole tree below pid (shared pages count once per process). */
export function treeRssBytes(pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + rssBytes(p), 0);
}
