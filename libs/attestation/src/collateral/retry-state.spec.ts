import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CollateralFetchError } from './errors.js';
import { parseRetryAfter } from './http-fetcher.js';
import { backoffDelay, DEFAULT_RETRY_POLICY, FailureTable, isTransient } from './retry-state.js';

describe('retry state', () => {
  const transient: Array<[string, unknown, boolean]> = [
    ['network error', new Error('ECONNREFUSED'), true],
    ['429', new CollateralFetchError('x', 1000, 429), true],
    ['408', new CollateralFetchError('x', undefined, 408), true],
    ['503', new CollateralFetchError('x', undefined, 503), true],
    ['404', new CollateralFetchError('x', undefined, 404), false],
    ['400', new CollateralFetchError('x', undefined, 400), false],
  ];
  for (const [name, err, want] of transient) it(`${name} is ${want ? 'transient' : 'permanent'}`, () => assert.equal(isTransient(err), want));

  const delays: Array<[string, number, unknown, number, number]> = [
    ['first retry', 1, new Error('x'), 1600, 2400],
    ['third retry doubles twice', 3, new Error('x'), 6400, 9600],
    ['capped', 30, new Error('x'), 240_000, 300_000],
    ['Retry-After wins when longer', 1, new CollateralFetchError('x', 60_000, 429), 60_000, 60_000],
    ['Retry-After capped at the maximum delay', 1, new CollateralFetchError('x', 3_600_000, 429), 300_000, 300_000],
  ];
  for (const [name, failures, err, min, max] of delays) {
    it(`backoff: ${name}`, () => {
      for (const r of [0, 0.5, 0.999]) {
        const d = backoffDelay(DEFAULT_RETRY_POLICY, failures, err, () => r);
        assert.ok(d >= min && d <= max, `${d} not in [${min}, ${max}]`);
      }
    });
  }

  it('keeps at most maxKeys keys, dropping the oldest', () => {
    const table = new FailureTable({ ...DEFAULT_RETRY_POLICY, maxKeys: 3 });
    for (const k of ['a', 'b', 'c', 'd']) table.record(k, new CollateralFetchError('x', undefined, 404), 0);
    assert.equal(table.size, 3);
    assert.equal(table.get('a'), undefined);
    assert.ok(table.get('d'));
  });

  it('stops scheduling background retries after maxAttempts', () => {
    const table = new FailureTable({ ...DEFAULT_RETRY_POLICY, maxAttempts: 2 });
    const plan = [1, 2, 3].map(() => table.record('k', new Error('down'), 0).retryIn);
    assert.ok(plan[0]! > 0 && plan[1]! > 0);
    assert.equal(plan[2], undefined);
  });

  const retryAfter: Array<[string, string | null, number | undefined]> = [
    ['absent', null, undefined],
    ['seconds', '120', 120_000],
    ['HTTP date', new Date(10_000).toUTCString(), 10_000],
    ['garbage', 'soon', undefined],
  ];
  for (const [name, header, want] of retryAfter) it(`Retry-After ${name}`, () => assert.equal(parseRetryAfter(header, 0), want));
});
