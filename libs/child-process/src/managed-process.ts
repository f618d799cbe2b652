import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Children started by this process; killed on exit so nothing outlives a crashed test or node. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live) {
    try {
      c.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

/**
 * When ASTERISM_PID_DIR is set (the test runner sets it), every child's pid is recorded there and
 * the runner kills leftovers after the test process ends, even if that process was killed itself.
 */
function recordPid(pid: number | undefined): void {
  const dir = process.env.ASTERISM_PID_DIR;
  if (!dir || !pid) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, String(pid)), '');
}

function forgetPid(pid: number | undefined): void {
  const dir = process.env.ASTERISM_PID_DIR;
  if (!dir || !pid) return;
  rmSync(join(dir, String(pid)), { force: true });
}

/** Options of {@link ManagedProcess.start}. */
export interface StartOptions {
  /** Extra environment over this process's own. */
  env?: NodeJS.ProcessEnv;
  /** Truncate the log file instead of appending to it. */
  truncateLog?: boolean;
}

/** A supervised child process with its stdout and stderr in a log file. */
export class ManagedProcess {
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** Rejects when the binary could not be started (never resolves otherwise). */
  readonly spawnFailed: Promise<Error>;
  #exitCode: number | null | undefined;
  #logError: Error | undefined;

  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
    readonly logPath: string,
  ) {
    live.add(child);
    recordPid(child.pid);
    this.exited = new Promise((resolve) => {
      const ended = (code: number | null) => {
        if (this.#exitCode !== undefined) return;
        this.#exitCode = code;
        live.delete(child);
        forgetPid(child.pid);
        resolve(code);
      };
      child.once('exit', ended);
      // A binary that never started emits 'error' and may never emit 'exit'.
      child.once('error', () => {
        if (child.pid === undefined) ended(null);
      });
    });
    this.spawnFailed = new Promise((resolve) => child.once('error', resolve));
  }

  /** Starts `binary args...`, writing stdout/stderr to `logPath`. */
  static start(name: string, binary: string, args: string[], logPath: string, options: StartOptions = {}): ManagedProcess {
    const log = createWriteStream(logPath, { flags: options.truncateLog ? 'w' : 'a' });
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    // 'close', not 'exit': output can still arrive after the exit, and writing to an ended stream fails.
    child.once('close', () => log.end());
    child.once('error', (err) => log.write(`failed to start ${binary}: ${err.message}\n`));
    const managed = new ManagedProcess(name, child, logPath);
    // A log that cannot be written (disk full, folder removed) must not take the supervisor down: kept for the caller.
    log.on('error', (err) => (managed.#logError ??= err));
    return managed;
  }

  /** The first error writing the log file, if any (the child keeps running without its log). */
  get logError(): Error | undefined {
    return this.#logError;
  }

  /** The child's pid (undefined when it could not be started). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether the child has neither exited nor been killed. */
  get running(): boolean {
    return this.#exitCode === undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the child has exited. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const t = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(t);
  }
}
