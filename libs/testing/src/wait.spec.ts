import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventually } from './wait.js';

describe('eventually', () => {
  it('returns the first defined value, treating errors as not yet', async () => {
    let calls = 0;
    const v = await eventually('the third call', async () => {
      calls++;
      if (calls === 1) throw new Error('not ready');
      return calls === 3 ? 'ready' : undefined;
    });
    assert.equal(v, 'ready');
    assert.equal(calls, 3);
  });

  it('names what it waited for when it times out', async () => {
    await assert.rejects(eventually('the impossible', async () => undefined, 300), /timed out waiting for the impossible/);
  });
});
