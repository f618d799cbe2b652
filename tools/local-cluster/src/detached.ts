import { execFileSync, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

/** A process of the local cluster that outlives `up` (its own process group). */
export interface DetachedProcess {
  name: string;
  pid: number;
  log: string;
}

/** Starts `binary args` in its own session with stdout/stderr appended to `log`. */
export function startDetached(name: string, binary: string, args: string[], log: string, opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): DetachedProcess {
  const fd = openSync(log, 'a', 0o600);
  try {
    const child = spawn(binary, args, { detached: true, stdio: ['ignore', fd, fd], cwd: opts.cwd, env: { ...process.env, ...(opts.env ?? {}) } });
    if (child.pid === undefined) throw new Error(`starting ${name} (${binary}) failed`);
    child.unref();
    return { name, pid: child.pid, log };
  } finally {
    closeSync(fd);
  }
}

/** Whether a pid is alive (signal 0; a zombie waiting for a reaper counts as dead). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  // Members may be zombies awaiting their reaper: count only live ones.
  try {
    return execFileSync('ps', ['-o', 'stat=', '-g', String(pgid)]).toString().split('\n').some((st) => st.trim() !== '' && !st.trim().startsWith('Z'));
  } catch {
    return false;
  }
}

/**
 * Stops a detached process and everything in its process group: SIGTERM, then SIGKILL after
 * `graceMs`. Resolves when no live member of the group is left.
 */
export async function stopDetached(pid: number, graceMs = 10_000): Promise<void> {
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-pid, s);
    } catch {
      try {
        process.kill(pid, s);
      } catch {
        /* gone */
      }
    }
  };
  const gone = () => !alive(pid) && !groupAlive(pid);
  if (gone()) return;
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (!gone() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (gone()) return;
  signal('SIGKILL');
  const hard = Date.now() + 5000;
  while (!gone() && Date.now() < hard) await new Promise((r) => setTimeout(r, 20));
}
