/**
 * One way to run a program to completion and collect what it printed (the kubeadm, cryptsetup and
 * helm wrappers use it): optional stdin (written, then closed: key material goes this way, never
 * argv), optional abort signal and timeout, complete stdout lines as they arrive, and the tails of
 * stdout, stderr or both interleaved, bounded in size. The exit status is the caller's to judge:
 * `runCommand` resolves with it and rejects only when the program could not be started (or was aborted).
 */
import { spawn } from 'node:child_process';
import { AsterismError } from '@asterism/errors';

/** The program could not be started (`details.errno`: ENOENT when it is not installed, EACCES, ...). */
export class CommandStartError extends AsterismError<'COMMAND_NOT_STARTED'> {}

/** Options of {@link runCommand}. */
export interface RunCommandOptions {
  /** Written to the program's stdin, which is then closed; without it stdin is /dev/null. */
  readonly stdin?: Uint8Array | string;
  /** Kills the program (SIGTERM) when aborted and rejects with the AbortError. */
  readonly signal?: AbortSignal;
  /** Kills the program (SIGTERM) after this many milliseconds. */
  readonly timeoutMs?: number;
  /** Each complete stdout line as it arrives (a last line without a newline is not reported). */
  readonly onStdoutLine?: (line: string) => void;
  /** Characters kept of each stream, its tail (default: all of stdout, 8192 of stderr). */
  readonly stdoutLimit?: number;
  readonly stderrLimit?: number;
  /** Also keep stdout and stderr interleaved in arrival order (`output`), its tail of this many characters. */
  readonly combinedLimit?: number;
}

/** How a program ended and what it printed. */
export interface CommandResult {
  /** Exit code; null when it was killed by a signal. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout and stderr interleaved (only with `combinedLimit`). */
  readonly output: string;
}

const tail = (s: string, limit: number | undefined) => (limit === undefined || s.length <= limit ? s : s.slice(-limit));

/** Runs `binary args` to completion; rejects with CommandStartError when it cannot be started, with the AbortError when aborted. */
export function runCommand(binary: string, args: readonly string[], options: RunCommandOptions = {}): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, {
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
    });
    let stdout = '';
    let stderr = '';
    let output = '';
    let partial = '';
    child.stdout!.on('data', (d: Buffer) => {
      const text = d.toString();
      stdout = tail(stdout + text, options.stdoutLimit);
      if (options.combinedLimit !== undefined) output = tail(output + text, options.combinedLimit);
      if (!options.onStdoutLine) return;
      const parts = (partial + text).split('\n');
      partial = parts.pop()!;
      for (const line of parts) if (line) options.onStdoutLine(line);
    });
    child.stderr!.on('data', (d: Buffer) => {
      const text = d.toString();
      stderr = tail(stderr + text, options.stderrLimit ?? 8192);
      if (options.combinedLimit !== undefined) output = tail(output + text, options.combinedLimit);
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      // Aborted through `signal`: the caller's AbortError, as every abortable API rejects.
      if (err.name === 'AbortError') return reject(err);
      reject(new CommandStartError('COMMAND_NOT_STARTED', `cannot run ${binary}: ${err.message}`, { details: { binary, errno: err.code ?? null }, cause: err }));
    });
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, output }));
    if (child.stdin) {
      child.stdin.on('error', () => undefined);
      child.stdin.end(typeof options.stdin === 'string' ? options.stdin : Buffer.from(options.stdin ?? ''));
    }
  });
}
