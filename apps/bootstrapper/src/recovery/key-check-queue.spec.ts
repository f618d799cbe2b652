import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyCheckQueue, KeyCheckRefused } from './key-check-queue.js';

/** A check that finishes when the test says so. */
function gate() {
  let open!: () => void;
  const done = new Promise<void>((r) => (open = r));
  return { open, check: async () => (await done, true) };
}
const refusal = (p: Promise<unknown>) => p.then(() => 'ran', (e: unknown) => (e instanceof KeyCheckRefused ? e.code : `untyped: ${String(e)}`));
const tick = () => new Promise((r) => setImmediate(r));

describe('KeyCheckQueue', () => {
  it('runs one check at a time and serves waiting addresses round robin', async () => {
    const q = new KeyCheckQueue({ capacity: 8, reserved: 0, perAddress: 3 });
    const order: string[] = [];
    const first = gate();
    const running = q.run('flood', first.check);
    const calls = [['flood', 'f1'], ['flood', 'f2'], ['operator', 'o1']].map(([a, n]) => q.run(a!, async () => void order.push(n!)));
    await tick();
    assert.deepEqual(order, [], 'nothing runs beside the first check');
    first.open();
    await Promise.all([running, ...calls]);
    assert.deepEqual(order, ['f1', 'o1', 'f2'], 'the operator waits behind one flood check, not its backlog');
    assert.equal(q.peakRunning, 1);
    assert.equal(q.size, 0);
  });

  it('refuses fast when full, per address, and keeps the reserve for fresh addresses', async () => {
    const q = new KeyCheckQueue({ capacity: 4, reserved: 2, perAddress: 3 });
    const g = gate();
    const held = [q.run('a', g.check), q.run('a', g.check)];
    assert.equal(await refusal(q.run('a', g.check)), 'KEY_CHECK_QUEUE_FULL', 'an address holding places cannot take the reserve');
    const fresh = q.run('b', g.check);
    const fresh2 = q.run('c', g.check);
    assert.equal(await refusal(q.run('d', g.check)), 'KEY_CHECK_QUEUE_FULL', 'no place left at all');
    g.open();
    await Promise.all([...held, fresh, fresh2]);
    const p = new KeyCheckQueue({ capacity: 8, reserved: 0, perAddress: 1 });
    const g2 = gate();
    const one = p.run('a', g2.check);
    assert.equal(await refusal(p.run('a', g2.check)), 'KEY_CHECK_ADDRESS_BUSY');
    g2.open();
    await one;
  });

  it('a waiting call whose caller went away leaves without running', async () => {
    const q = new KeyCheckQueue();
    const g = gate();
    const running = q.run('a', g.check);
    const abort = new AbortController();
    let ran = false;
    const waiting = refusal(q.run('b', async () => (ran = true), abort.signal));
    abort.abort();
    assert.equal(await waiting, 'KEY_CHECK_CANCELLED');
    g.open();
    await running;
    assert.equal(ran, false);
    assert.equal(q.size, 0);
  });
});
