import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BudgetPool, type BudgetPoolLimits } from './attestation-budget.js';
import { AtlsError } from './errors.js';

const limits = (over: Partial<BudgetPoolLimits> = {}): BudgetPoolLimits => ({ perSecond: 1000, burst: 1000, concurrent: 1, queue: 8, queuePerAddress: 1, maxWaitMs: 10_000, ...over });
function gate() {
  let open!: () => void;
  const done = new Promise<void>((r) => (open = r));
  return { open, job: () => done };
}
const outcome = (p: Promise<unknown>) => p.then(() => 'ran', (e: unknown) => (e instanceof AtlsError ? `${e.code}/${String(e.details.reason)}/${e.retryable}` : `untyped ${String(e)}`));

describe('BudgetPool', () => {
  // The pool's timers do not keep a process alive (sockets do in a server); this one does here.
  let keep: NodeJS.Timeout;
  before(() => (keep = setInterval(() => undefined, 1000)));
  after(() => clearInterval(keep));

  it('a fresh address goes before every address the pool served lately', async () => {
    const refused: string[] = [];
    let t = 0;
    const pool = new BudgetPool('validations', limits(), (r) => refused.push(r), () => (t += 10));
    await pool.run('flood-2', async () => undefined);
    await pool.run('flood-3', async () => undefined);
    const order: string[] = [];
    const first = gate();
    const running = pool.run('flood-1', first.job);
    const waiting = ['flood-3', 'flood-2', 'fresh', 'flood-1'].map((a) => pool.run(a, async () => void order.push(a)));
    first.open();
    await Promise.all([running, ...waiting]);
    assert.deepEqual(order, ['fresh', 'flood-2', 'flood-3', 'flood-1'], 'never served first, then least recently served');
    assert.deepEqual(refused, []);
  });

  it('refuses fast, typed and retryable: one waiting job per address, queue full, waited too long', async () => {
    const pool = new BudgetPool('handshakes', limits({ queue: 2, maxWaitMs: 50 }));
    const g = gate();
    const running = pool.run('a', g.job);
    const w1 = outcome(pool.run('b', async () => undefined));
    assert.equal(await outcome(pool.run('b', async () => undefined)), 'ATTESTATION_BUDGET/BUDGET_ADDRESS_QUEUED/true');
    const w2 = outcome(pool.run('c', async () => undefined));
    assert.equal(await outcome(pool.run('d', async () => undefined)), 'ATTESTATION_BUDGET/BUDGET_QUEUE_FULL/true');
    assert.deepEqual([await w1, await w2], ['ATTESTATION_BUDGET/BUDGET_QUEUE_TIMEOUT/true', 'ATTESTATION_BUDGET/BUDGET_QUEUE_TIMEOUT/true']);
    g.open();
    await running;
    assert.equal(pool.queued, 0);
  });

  it('starts at most burst + rate x time jobs', async () => {
    const pool = new BudgetPool('validations', limits({ perSecond: 20, burst: 5, concurrent: 100, queue: 1000, queuePerAddress: 1000 }));
    const t0 = Date.now();
    const jobs = Array.from({ length: 12 }, () => pool.run('a', async () => Date.now() - t0));
    const starts = await Promise.all(jobs);
    // 5 at once, then one every 50 ms: the 12th starts after ~350 ms.
    assert.ok(starts[11]! >= 300, `12th job started after ${starts[11]} ms`);
    assert.equal(pool.started, 12);
  });
});
