import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommandStartError, runCommand } from './run-command.js';

describe('runCommand (real programs: sh, cat)', () => {
  it('collects stdout and stderr and resolves with the exit code, also a non-zero one', async () => {
    const r = await runCommand('sh', ['-c', 'echo out; echo err >&2; exit 3']);
    assert.deepEqual([r.code, r.signal, r.stdout, r.stderr], [3, null, 'out\n', 'err\n']);
  });

  it('writes stdin and closes it (key material never on argv)', async () => {
    const r = await runCommand('cat', [], { stdin: Buffer.from('secret bytes') });
    assert.equal(r.stdout, 'secret bytes');
  });

  it('reports complete stdout lines as they arrive, a last line without newline not', async () => {
    const lines: string[] = [];
    await runCommand('sh', ['-c', 'printf "a\\nb"; sleep 0.05; printf "c\\n\\nd"'], { onStdoutLine: (l) => lines.push(l) });
    assert.deepEqual(lines, ['a', 'bc']);
  });

  it('keeps bounded tails, and stdout and stderr interleaved when asked', async () => {
    const r = await runCommand('sh', ['-c', 'echo 1234567890; sleep 0.05; echo abc >&2; sleep 0.05; echo xyz'], { stdoutLimit: 4, stderrLimit: 2, combinedLimit: 8 });
    assert.deepEqual([r.stdout, r.stderr, r.output], ['xyz\n', 'c\n', 'abc\nxyz\n']);
  });

  it('a missing program is COMMAND_NOT_STARTED with errno ENOENT', async () => {
    await assert.rejects(runCommand('/nonexistent/asterism-no-such-program', []), (e: unknown) => e instanceof CommandStartError && e.code === 'COMMAND_NOT_STARTED' && e.details.errno === 'ENOENT');
  });

  it('kills the program on timeout (result with the signal) and rejects with the AbortError on abort', async () => {
    const timedOut = await runCommand('sleep', ['5'], { timeoutMs: 50 });
    assert.deepEqual([timedOut.code, timedOut.signal], [null, 'SIGTERM']);
    await assert.rejects(runCommand('sleep', ['5'], { signal: AbortSignal.timeout(50) }), (e: unknown) => (e as Error).name === 'AbortError');
  });
});
