import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extend, replay, SEPARATOR_DIGEST, sha256 } from './pcr.js';

describe('PCR arithmetic', () => {
  it('a register holding only the separator has the value docs/protocol/measurements.md lists for PCRs 2, 3 and 6', () => {
    assert.equal(replay([SEPARATOR_DIGEST]).toString('hex'), '3d458cfe55cc03ea1f443f1562beec8df51c75e14a9fcf9a7234a13f198e7969');
  });

  it('replays extends in order (order matters)', () => {
    const a = sha256('a');
    const b = sha256('b');
    assert.deepEqual(replay([a, b]), extend(extend(Buffer.alloc(32), a), b));
    assert.notDeepEqual(replay([a, b]), replay([b, a]));
    assert.deepEqual(replay([]), Buffer.alloc(32));
  });
});
