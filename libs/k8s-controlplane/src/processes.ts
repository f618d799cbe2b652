import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** Children started by this process; killed on exit so nothing outlives a crashed test. */
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
 * the runner kills leftovers after the test process ends, even if it was killed itself.
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

/** A supervised child process with its output in a log file. */
export class ManagedProcess {
  readonly exited: Promise<number | null>;
  #exitCode: number | null | undefined;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    readonly logPath: string,
  ) {
    live.add(child);
    recordPid(child.pid);
    this.exited = new Promise((resolve) =>
      child.once('exit', (code) => {
        this.#exitCode = code;
        live.delete(child);
        forgetPid(child.pid);
        resolve(code);
      }),
    );
  }

  /** Starts `binary args...`, appending stdout/stderr to `logPath`. */
  static start(name: string, binary: string, args: string[], logPath: string, env: NodeJS.ProcessEnv = {}): ManagedProcess {
    const log = createWriteStream(logPath, { flags: 'a' });
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    // 'close', not 'exit': output can still arrive after the exit, and writing to an ended stream throws.
    child.once('close', () => log.end());
    log.on('error', () => undefined);
    child.once('error', (err) => log.write(`failed to start ${binary}: ${err.message}\n`));
    return new ManagedProcess(name, child, logPath);
  }

  get running(): boolean {
    return this.#exitCode === undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const t = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(t);
  }
}

/** A free TCP port on 127.0.0.1 (best effort: the port is released before it is used). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Polls `check` until it resolves true, failing after `timeoutMs` or when `alive()` turns false. */
export async function waitFor(what: string, check: () => Promise<boolean>, opts: { timeoutMs: number; alive?: () => boolean; hint?: () => string }): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      /* not yet */
    }
    if (opts.alive && !opts.alive()) throw new Error(`${what}: process exited${opts.hint ? `; ${opts.hint()}` : ''}`);
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${opts.timeoutMs} ms${opts.hint ? `; ${opts.hint()}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
