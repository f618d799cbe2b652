import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CachedDenyList, decodeDenyList, denyKey, type DenyEntry } from './deny-list.js';

const AK = `sha256:${'ab'.repeat(32)}`;
const entry = (kind: DenyEntry['kind'], id: string): DenyEntry => ({ kind, id, node: 'worker-1', reason: 'MeasurementMismatch: PCR[9] differs', since: '2026-11-26T12:00:00.000Z' });

describe('deny list', () => {
  it('keys are ConfigMap-safe and round-trip through decode (disk UUIDs lower-cased, AK digests re-prefixed)', () => {
    const data = { [denyKey('disk', 'AAAAAAAA-0000-4000-8000-00000000000A')]: '{"node":"worker-1","reason":"r","since":"s"}', [denyKey('ak', AK)]: '{"node":"worker-1","reason":"r","since":"s"}' };
    assert.deepEqual(Object.keys(data), ['disk.aaaaaaaa-0000-4000-8000-00000000000a', `ak.${'ab'.repeat(32)}`]);
    assert.deepEqual(decodeDenyList(data).map((e) => [e.kind, e.id, e.node]), [['disk', 'aaaaaaaa-0000-4000-8000-00000000000a', 'worker-1'], ['ak', AK, 'worker-1']]);
  });

  it('an unreadable value still denies its key; unknown keys are ignored', () => {
    assert.deepEqual(decodeDenyList({ 'disk.abc': 'not json', other: 'x' }).map((e) => [e.id, e.reason]), [['abc', 'deny-listed']]);
  });

  it('CachedDenyList matches a disk in any case and an AK digest, never `none:` digests, and re-reads after maxAge', async () => {
    let reads = 0;
    let now = 0;
    const entries = [entry('disk', 'aaaaaaaa-0000-4000-8000-00000000000a'), entry('ak', AK)];
    const cached = new CachedDenyList({ list: async () => (reads++, entries) }, 1000, () => now);
    assert.equal((await cached.find({ diskUuid: 'AAAAAAAA-0000-4000-8000-00000000000A' }))?.kind, 'disk');
    assert.equal((await cached.find({ diskUuid: 'bbbbbbbb-0000-4000-8000-00000000000b', akDigest: AK }))?.kind, 'ak');
    assert.equal(await cached.find({ diskUuid: 'bbbbbbbb-0000-4000-8000-00000000000b', akDigest: 'none:dummy' }), undefined);
    assert.equal(reads, 1);
    now = 1001;
    await cached.find({});
    assert.equal(reads, 2);
  });

  it('CachedDenyList fails closed: a read error rejects the lookup and the next lookup reads again', async () => {
    let fail = true;
    const cached = new CachedDenyList({ list: async () => (fail ? Promise.reject(new Error('apiserver down')) : []) }, 60_000, () => 0);
    await assert.rejects(cached.find({ diskUuid: 'x' }), /apiserver down/);
    fail = false;
    assert.equal(await cached.find({ diskUuid: 'x' }), undefined);
  });
});
