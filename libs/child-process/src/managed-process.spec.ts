import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ManagedProcess } from './managed-process.js';

const dir = mkdtempSync(join(tmpdir(), 'asterism-child-process-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Waits until the log file holds `text` (the log ends when the child's streams close). */
async function logHolds(path: string, text: string): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (existsSync(path) && readFileSync(path, 'utf8').includes(text)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

describe('ManagedProcess', () => {
  it('writes stdout and stderr to the log and resolves exited with the exit code', async () => {
    const log = join(dir, 'out.log');
    const p = ManagedProcess.start('sh', 'sh', ['-c', 'echo to-stdout; echo to-stderr >&2; exit 3'], log);
    assert.equal(await p.exited, 3);
    assert.equal(p.running, false);
    assert.ok(await logHolds(log, 'to-stdout'));
    assert.ok(await logHolds(log, 'to-stderr'));
  });

  it('keeps output that arrives after the exit (a background child still holds the streams) without a write-after-end error', async () => {
    const log = join(dir, 'late.log');
    const p = ManagedProcess.start('late', 'sh', ['-c', '(sleep 0.2; echo late-line) & exit 0'], log);
    assert.equal(await p.exited, 0);
    assert.ok(await logHolds(log, 'late-line'), 'the late line reached the log');
    assert.equal(p.logError, undefined);
  });

  it('a log file that cannot be written is reported on logError, not thrown', async () => {
    const p = ManagedProcess.start('nolog', 'sh', ['-c', 'echo x'], join(dir, 'no-such-folder', 'x.log'));
    assert.equal(await p.exited, 0);
    for (let i = 0; i < 50 && !p.logError; i++) await new Promise((r) => setTimeout(r, 20));
    assert.match(String(p.logError?.message), /ENOENT/);
  });

  it('records its pid in ASTERISM_PID_DIR while it runs and forgets it after the exit', async () => {
    const pids = join(dir, 'pids');
    const before = process.env.ASTERISM_PID_DIR;
    process.env.ASTERISM_PID_DIR = pids;
    try {
      const p = ManagedProcess.start('sleeper', 'sleep', ['30'], join(dir, 'sleep.log'));
      assert.deepEqual(readdirSync(pids), [String(p.pid)]);
      await p.stop(2000);
      assert.deepEqual(readdirSync(pids), []);
    } finally {
      if (before === undefined) delete process.env.ASTERISM_PID_DIR;
      else process.env.ASTERISM_PID_DIR = before;
    }
  });

  it('stop() sends SIGTERM, then SIGKILL after the grace period to a child that ignores SIGTERM', async () => {
    const p = ManagedProcess.start('stubborn', 'sh', ['-c', "trap '' TERM; echo ready; while :; do sleep 0.05; done"], join(dir, 'stubborn.log'));
    assert.ok(await logHolds(join(dir, 'stubborn.log'), 'ready'));
    const started = Date.now();
    await p.stop(300);
    assert.equal(p.running, false);
    assert.equal(p.child.signalCode, 'SIGKILL');
    assert.ok(Date.now() - started >= 250, 'waited for the grace period first');
  });

  it('a binary that cannot start: spawnFailed resolves with the error and the log says so', async () => {
    const log = join(dir, 'missing.log');
    const p = ManagedProcess.start('missing', join(dir, 'no-such-binary'), [], log);
    const err = await p.spawnFailed;
    assert.match(err.message, /ENOENT/);
    assert.ok(await logHolds(log, 'failed to start'));
    assert.equal(await p.exited, null);
    assert.equal(p.running, false);
    await p.stop(100);
  });
});
