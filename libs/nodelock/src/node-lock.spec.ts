import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NodeLock, NodeLockError, type NodeMarker } from './node-lock.js';

class CountingMarker implements NodeMarker {
  calls: Buffer[] = [];
  constructor(private readonly fail = false) {}
  async markNodeAsBootstrapped(clusterId: Uint8Array) {
    this.calls.push(Buffer.from(clusterId));
    await new Promise((r) => setTimeout(r, 5));
    if (this.fail) throw new Error('TPM gone');
  }
}

describe('NodeLock (TestTryLockOnce)', () => {
  it('first call wins, later concurrent calls lose, the marker runs once', async () => {
    const marker = new CountingMarker();
    const lock = new NodeLock(marker);
    assert.equal(await lock.tryLockOnce(Buffer.from([1]), 'init'), 'acquired');
    const rest = await Promise.all(Array.from({ length: 10 }, () => lock.tryLockOnce(Buffer.from([2]), 'join')));
    assert.ok(rest.every((r) => r === 'already-locked'));
    assert.equal(marker.calls.length, 1);
    assert.equal(lock.owner, 'init');
  });

  it('1,000 interleaved async callers produce exactly one winner', async () => {
    const marker = new CountingMarker();
    const lock = new NodeLock(marker);
    const results = await Promise.all(
      Array.from({ length: 1000 }, async (_, i) => {
        await new Promise((r) => setTimeout(r, i % 7));
        return lock.tryLockOnce(Buffer.from([i & 0xff]), i % 2 ? 'join' : 'init');
      }),
    );
    assert.equal(results.filter((r) => r === 'acquired').length, 1);
    assert.equal(marker.calls.length, 1);
    assert.ok(lock.locked);
  });

  it('stays locked when marking fails and reports the error to the winner only', async () => {
    const lock = new NodeLock(new CountingMarker(true));
    await assert.rejects(lock.tryLockOnce(Buffer.from([1])), (e: unknown) => e instanceof NodeLockError && e.code === 'MARK_FAILED' && /TPM gone/.test(e.message));
    assert.equal(lock.locked, true);
    assert.equal(await lock.tryLockOnce(Buffer.from([1])), 'already-locked');
  });
});
