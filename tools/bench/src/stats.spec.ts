import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { median, quantile, ratio } from './stats.js';

describe('bench stats', () => {
  it('medians of odd and even sample counts, unsorted input untouched', () => {
    const xs = [5, 1, 3];
    assert.equal(median(xs), 3);
    assert.deepEqual(xs, [5, 1, 3]);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.ok(Number.isNaN(median([])));
  });

  it('quantiles interpolate and clamp', () => {
    assert.equal(quantile([0, 10], 0.9), 9);
    assert.equal(quantile([0, 10], 2), 10);
    assert.equal(quantile([7], 0.99), 7);
  });

  it('ratios are rounded', () => {
    assert.equal(ratio(1, 3), 0.333);
    assert.equal(ratio(500, 1000), 0.5);
  });
});
