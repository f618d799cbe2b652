import { spawn } from 'node:child_process';
import { AsterismError } from '@asterism/errors';

/** cryptsetup failed or is missing. Messages carry cryptsetup's stderr, never key material. */
export class CryptsetupError extends AsterismError<'CRYPTSETUP_MISSING' | 'CRYPTSETUP_FAILED' | 'WRONG_PASSPHRASE'> {}

/**
 * One cryptsetup invocation. Key material goes over stdin only (never files, never argv):
 * cryptsetup reads `--key-file=-` and a new key file `-` from stdin one after the other when
 * `--keyfile-size` / `--new-keyfile-size` say where the first ends.
 */
export interface CryptsetupRun {
  args: string[];
  stdin?: Uint8Array | string;
}

/** Runs cryptsetup; resolves stdout, rejects with CryptsetupError (stderr's last line). */
export function runCryptsetup(run: CryptsetupRun, binary = 'cryptsetup'): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, run.args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'ENOENT'
          ? new CryptsetupError('CRYPTSETUP_MISSING', 'cryptsetup is not installed (Debian package cryptsetup-bin)')
          : new CryptsetupError('CRYPTSETUP_FAILED', `running cryptsetup: ${err.message}`),
      ),
    );
    child.on('close', (code) => {
      if (code === 0) return resolve(stdout);
      const what = run.args.find((a) => !a.startsWith('-')) ?? 'command';
      // rc 2 = "No key available with this passphrase".
      const codeName = code === 2 ? 'WRONG_PASSPHRASE' : 'CRYPTSETUP_FAILED';
      reject(new CryptsetupError(codeName, `cryptsetup ${what} failed (exit ${code}): ${stderr.trim().split('\n').pop() ?? ''}`, { details: { exitCode: code } }));
    });
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(typeof run.stdin === 'string' ? run.stdin : Buffer.from(run.stdin ?? ''));
  });
}
