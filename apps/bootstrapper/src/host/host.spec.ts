import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { OsHostInfo } from './host-info.js';
import { FileLogSource } from './log-source.js';

async function collect(src: FileLogSource): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of src.read()) parts.push(p);
  return Buffer.concat(parts);
}

describe('host facts', () => {
  it('lists no loopback address and uses overrides when given', async () => {
    const addrs = await new OsHostInfo().addresses();
    assert.ok(!addrs.includes('127.0.0.1') && !addrs.includes('::1'));
    const o = new OsHostInfo({ addresses: ['127.0.0.11'], hostname: 'worker-1' });
    assert.deepEqual(await o.addresses(), ['127.0.0.11']);
    assert.equal(await o.hostname(), 'worker-1');
  });

  it('streams the tail of the log file, bounded, and nothing for a missing file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logsrc-'));
    const path = join(dir, 'bootstrapper.log');
    writeFileSync(path, 'a'.repeat(1000) + 'TAIL');
    assert.equal((await collect(new FileLogSource(path))).length, 1004);
    const tail = await collect(new FileLogSource(path, 4));
    assert.equal(tail.toString(), 'TAIL');
    assert.equal((await collect(new FileLogSource(join(dir, 'missing')))).length, 0);
    // The node image logs to the journal only: its log source is /dev/null (size 0), which sent a range error to the CLI.
    assert.equal((await collect(new FileLogSource('/dev/null'))).length, 0);
    writeFileSync(join(dir, 'empty.log'), '');
    assert.equal((await collect(new FileLogSource(join(dir, 'empty.log')))).length, 0);
  });
});
