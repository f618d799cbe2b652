import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { statusWriter, type NodeStatus } from './status-file.js';

describe('statusWriter', () => {
  const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as NodeStatus;

  it('keeps a reported milestone (joinServiceReachableAt) in every later write; other fields are per update', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'status-')), 'run/asterism/status.json');
    const write = statusWriter(path, { name: 'worker-0', variant: 'qemu-vtpm' }, (err) => assert.fail(String(err)));
    await write({ phase: 'starting' });
    assert.equal(read(path).joinServiceReachableAt, undefined);
    await write({ phase: 'waiting', joinServiceReachableAt: '2026-11-25T20:00:00.123Z' });
    await write({ phase: 'failed', error: 'x' });
    await write({ phase: 'joined', bootstrapMs: 42 });
    const s = read(path);
    assert.deepEqual([s.name, s.variant, s.phase, s.bootstrapMs, s.joinServiceReachableAt, s.error], ['worker-0', 'qemu-vtpm', 'joined', 42, '2026-11-25T20:00:00.123Z', undefined]);
  });

  it('writes in call order even when the calls are not awaited', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'status-')), 'status.json');
    const write = statusWriter(path, { name: 'n', variant: 'qemu-vtpm' }, (err) => assert.fail(String(err)));
    const phases: NodeStatus['phase'][] = ['starting', 'waiting', 'joined'];
    await Promise.all(phases.map((phase) => write({ phase })));
    assert.equal(read(path).phase, 'joined');
  });

  it('reports a failed write to onError instead of throwing', async () => {
    const errors: unknown[] = [];
    // The status folder's place is taken by a file: mkdir fails with ENOTDIR/EEXIST.
    const dir = mkdtempSync(join(tmpdir(), 'status-'));
    writeFileSync(join(dir, 'run'), '');
    const write = statusWriter(join(dir, 'run/asterism/status.json'), { name: 'n', variant: 'qemu-vtpm' }, (err) => errors.push(err));
    await write({ phase: 'starting' });
    assert.equal(errors.length, 1);
  });
});
