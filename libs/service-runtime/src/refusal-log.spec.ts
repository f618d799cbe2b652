import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RefusalLog } from './refusal-log.js';

function sink() {
  const lines: Array<{ msg: string; fields: Record<string, unknown> }> = [];
  return { lines, warn: (msg: string, fields: Record<string, unknown> = {}) => void lines.push({ msg, fields }) };
}

describe('RefusalLog', () => {
  it('writes the first refusal of a reason per interval and one summary for the rest', () => {
    let t = 0;
    const s = sink();
    const log = new RefusalLog(s, 'refused', { intervalMs: 1000, now: () => t });
    for (let i = 0; i < 10_000; i++) log.refused('RATE', { peer: `10.0.0.${i % 250}` });
    log.refused('BUDGET');
    assert.equal(s.lines.length, 2, 'one line per reason so far');
    assert.deepEqual(s.lines[0], { msg: 'refused', fields: { reason: 'RATE', peer: '10.0.0.0', refusedSoFar: 1 } });
    log.flush();
    assert.equal(s.lines.length, 3);
    assert.deepEqual(s.lines[2]!.fields, { reason: 'RATE', notLoggedSeparately: 9_999, intervalMs: 1000, refusedSoFar: 10_000 });
    t = 1000;
    log.refused('RATE', { peer: 'x' });
    assert.equal(s.lines.length, 4, 'a new interval writes its first refusal again');
    assert.deepEqual(log.totals, { RATE: 10_001, BUDGET: 1 });
  });

  it('a new interval first writes the summary of the previous one', () => {
    let t = 0;
    const s = sink();
    const log = new RefusalLog(s, 'refused', { intervalMs: 1000, now: () => t });
    log.refused('RATE');
    log.refused('RATE');
    t = 5000;
    log.refused('RATE');
    assert.deepEqual(s.lines.map((l) => [l.msg, l.fields.refusedSoFar]), [['refused', 1], ['refused (summary)', 2], ['refused', 3]]);
    log.flush();
    assert.equal(s.lines.length, 3, 'nothing pending');
  });

  it('the interval timer writes the summary by itself', async () => {
    const s = sink();
    const log = new RefusalLog(s, 'refused', { intervalMs: 20 });
    log.refused('RATE');
    log.refused('RATE');
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(s.lines.at(-1)!.msg, 'refused (summary)');
  });
});

describe('RefusalLog with a few lines per interval', () => {
  it('writes the first N refusals of a reason, then counts', () => {
    const s = sink();
    const log = new RefusalLog(s, 'refused', { intervalMs: 1000, linesPerInterval: 3, now: () => 0 });
    for (let i = 0; i < 100; i++) log.refused('CODE', { i });
    log.flush();
    assert.deepEqual(s.lines.map((l) => l.fields.i ?? `summary ${String(l.fields.notLoggedSeparately)}`), [0, 1, 2, 'summary 97']);
  });
});
