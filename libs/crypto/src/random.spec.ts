import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateNonce, randomBytes, randomSerialNumber } from './random.js';

describe('random', () => {
  it('returns the requested lengths and differs between calls', () => {
    assert.equal(randomBytes(16).length, 16);
    assert.equal(generateNonce().length, 32);
    assert.notDeepEqual(generateNonce(), generateNonce());
  });

  it('serial numbers are below 2^128 and differ', () => {
    const seen = new Set<bigint>();
    for (let i = 0; i < 100; i++) {
      const s = randomSerialNumber();
      assert.ok(s >= 0n && s < 1n << 128n);
      seen.add(s);
    }
    assert.equal(seen.size, 100);
  });
});
