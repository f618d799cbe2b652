import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { spawn } from 'node:child_process';
import { runCaptured, ServiceProcess } from './process.js';

describe('ServiceProcess', () => {
  it('collects JSON log lines and waits for one', async () => {
    const child = spawn(process.execPath, ['-e', 'console.error(JSON.stringify({msg:"a"}));console.error("plain");setTimeout(()=>console.error(JSON.stringify({msg:"ready",port:7})),50);setTimeout(()=>{},5000)'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const p = new ServiceProcess(child);
    const line = await p.waitForLog((l) => l.msg === 'ready');
    assert.equal(line.port, 7);
    const res = await p.stop();
    assert.equal(res.signal, 'SIGTERM');
    assert.deepEqual(p.jsonLogs().map((l) => l.msg), ['a', 'ready']);
  });

  it('fails fast when the process exits before the line', async () => {
    const child = spawn(process.execPath, ['-e', 'console.error("boom"); process.exit(3)'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const p = new ServiceProcess(child);
    await assert.rejects(p.waitForLog((l) => l.msg === 'never'), /exited before the expected log line[\s\S]*boom/);
    assert.equal((await p.exited).code, 3);
  });
});

describe('runCaptured', () => {
  for (const [name, script, timeoutMs, want] of [
    ['exit code and both streams', 'process.stdout.write("out"); process.stderr.write("err"); process.exit(4)', 10_000, { code: 4, stdout: 'out', stderr: 'err' }],
    ['a hung process is killed at the timeout', 'setTimeout(() => {}, 60_000)', 200, { code: -1, stdout: '', stderr: '' }],
  ] as const) {
    it(name, async () => {
      assert.deepEqual(await runCaptured(process.execPath, ['-e', script], { timeoutMs }), want);
    });
  }
});
