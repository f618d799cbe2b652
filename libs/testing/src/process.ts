import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';

/** Absolute path of the workspace root (tests run from anywhere). */
export const WORKSPACE_ROOT = process.env.ASTERISM_WORKSPACE ?? resolve(import.meta.dirname, '..', '..', '..');

/** A child process whose JSON log lines (stderr) and stdout are collected for assertions. */
export class ServiceProcess {
  readonly stderrLines: string[] = [];
  readonly stdoutText: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #partial = '';

  constructor(readonly child: ChildProcess) {
    child.stderr?.setEncoding('utf8');
    child.stdout?.setEncoding('utf8');
    child.stderr?.on('data', (d: string) => {
      const text = this.#partial + d;
      const parts = text.split('\n');
      this.#partial = parts.pop() ?? '';
      this.stderrLines.push(...parts.filter(Boolean));
    });
    child.stdout?.on('data', (d: string) => this.stdoutText.push(d));
    this.exited = once(child, 'exit').then(([code, signal]) => {
      if (this.#partial) this.stderrLines.push(this.#partial);
      return { code: code as number | null, signal: signal as NodeJS.Signals | null };
    });
  }

  /** All stderr lines that parse as JSON objects. */
  jsonLogs(): Array<Record<string, unknown>> {
    const out: Array<Record<string, unknown>> = [];
    for (const l of this.stderrLines) {
      try {
        const v = JSON.parse(l) as unknown;
        if (v && typeof v === 'object') out.push(v as Record<string, unknown>);
      } catch {
        /* not JSON */
      }
    }
    return out;
  }

  /** Everything the process printed so far (stdout + stderr). */
  allOutput(): string {
    return [...this.stderrLines, this.#partial, ...this.stdoutText].join('\n');
  }

  /** Waits for a JSON log line matching `predicate`, failing on exit or timeout. */
  async waitForLog(predicate: (line: Record<string, unknown>) => boolean, timeoutMs = 20_000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    void this.exited.then(() => (exited = true));
    for (;;) {
      const hit = this.jsonLogs().find(predicate);
      if (hit) return hit;
      if (exited) throw new Error(`process exited before the expected log line; output:\n${this.allOutput()}`);
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for a log line; output:\n${this.allOutput()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Sends a signal and waits for exit (SIGKILL after `graceMs`). */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill(signal);
      const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
      const res = await this.exited;
      clearTimeout(timer);
      return res;
    }
    return this.exited;
  }
}

/** Starts a TypeScript entry point of this workspace with tsx (`node --import tsx <file> ...args`). */
export function startTsProcess(entry: string, args: string[], env: NodeJS.ProcessEnv = {}): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(WORKSPACE_ROOT, entry), ...args], {
    cwd: WORKSPACE_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new ServiceProcess(child);
}

/** What {@link runCaptured} returns: the exit code (-1 when killed) and both streams. */
export interface CapturedRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end and captures stdout/stderr (e.g. the CLI as a user runs it); killed
 * with SIGKILL after `timeoutMs` so a hung process cannot hang the test.
 */
export function runCaptured(command: string, args: string[], opts: { cwd?: string; timeoutMs?: number } = {}): Promise<CapturedRun> {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { cwd: opts.cwd ?? WORKSPACE_ROOT });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? -1, stdout, stderr });
    });
  });
}
