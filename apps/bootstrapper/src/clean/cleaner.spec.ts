import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Cleaner } from './cleaner.js';

const counter = () => {
  const s = { n: 0, stop: () => void s.n++ };
  return s;
};

describe('Cleaner', () => {
  it('stops every stopper after clean(), once (TestClean)', async () => {
    const a = counter();
    const b = counter();
    const c = new Cleaner(a).with(b);
    const started = c.start();
    c.clean();
    c.clean();
    await started;
    await c.done();
    assert.deepEqual([a.n, b.n], [1, 1]);
  });

  it('accepts clean() before start() (TestCleanBeforeStart)', async () => {
    const a = counter();
    const c = new Cleaner(a);
    c.clean();
    await c.start();
    assert.equal(a.n, 1);
  });

  it('survives concurrent start/clean/done (TestConcurrent)', async () => {
    const a = counter();
    const c = new Cleaner(a);
    await Promise.all(Array.from({ length: 10 }, async (_, i) => (i % 3 === 0 ? c.start() : i % 3 === 1 ? c.clean() : c.done())));
    assert.equal(a.n, 1);
  });

  it('still finishes when a stopper throws', async () => {
    const a = counter();
    const c = new Cleaner({ stop: () => Promise.reject(new Error('x')) }, a);
    c.clean();
    await c.done();
    assert.equal(a.n, 1);
  });
});
