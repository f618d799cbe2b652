/** Every header operation of the state disk waits for the mapper's background format (docs/adr/0041-state-disk-mapper.md addendum). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CryptsetupStateDisk } from './state-disk.js';

describe('CryptsetupStateDisk and a format still running', () => {
  it('waits for the format before each operation, and reports its failure instead of touching the header', async () => {
    const failure = new Error('mkfs.ext4 -q failed (exit 1)');
    let readyCalls = 0;
    const disk = new CryptsetupStateDisk('/nonexistent/state', '/nonexistent/key', undefined, async () => {
      readyCalls++;
      throw failure;
    });
    for (const op of [() => disk.uuid(), () => disk.token(), () => disk.markForReset(), () => disk.testPassphrase(Buffer.alloc(32)), () => disk.updatePassphrase(Buffer.alloc(32))]) {
      await assert.rejects(op(), (e: unknown) => e === failure);
    }
    assert.equal(readyCalls, 5);
  });

  it('runs the operation once the format is done', async () => {
    let release!: () => void;
    const formatted = new Promise<void>((r) => (release = r));
    const disk = new CryptsetupStateDisk('/nonexistent/state', '/nonexistent/key', undefined, () => formatted);
    let settled = false;
    const uuid = disk.uuid().finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(settled, false, 'uuid() waits for the format');
    release();
    // The real cryptsetup now runs on a device that does not exist: a cryptsetup error, not the gate's.
    await assert.rejects(uuid, (e: unknown) => (e as { name?: string }).name === 'CryptsetupError');
  });
});
