import { runCommand } from '@asterism/child-process';
import { AsterismError, isAsterismError } from '@asterism/errors';

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

/** Runs cryptsetup (runCommand of @asterism/child-process); resolves stdout, rejects with CryptsetupError (stderr's last line). */
export async function runCryptsetup(run: CryptsetupRun, binary = 'cryptsetup'): Promise<string> {
  let r;
  try {
    r = await runCommand(binary, run.args, { stdin: run.stdin ?? '' });
  } catch (err) {
    if (isAsterismError(err, 'COMMAND_NOT_STARTED') && err.details.errno === 'ENOENT') throw new CryptsetupError('CRYPTSETUP_MISSING', 'cryptsetup is not installed (Debian package cryptsetup-bin)');
    throw new CryptsetupError('CRYPTSETUP_FAILED', `running cryptsetup: ${((err as Error).cause as Error | undefined)?.message ?? (err as Error).message}`, { cause: err });
  }
  if (r.code === 0) return r.stdout;
  const what = run.args.find((a) => !a.startsWith('-')) ?? 'command';
  // rc 2 = "No key available with this passphrase".
  const codeName = r.code === 2 ? 'WRONG_PASSPHRASE' : 'CRYPTSETUP_FAILED';
  throw new CryptsetupError(codeName, `cryptsetup ${what} failed (exit ${r.code}): ${r.stderr.trim().split('\n').pop() ?? ''}`, { details: { exitCode: r.code } });
}
