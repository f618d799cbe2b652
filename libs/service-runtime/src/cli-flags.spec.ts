import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlagError, intFlag } from './cli-flags.js';

describe('intFlag', () => {
  it('parses within bounds, falls back when absent, names the flag on errors', () => {
    assert.equal(intFlag('port', '9000', 1, 0, 65535), 9000);
    assert.equal(intFlag('port', undefined, 1, 0, 65535), 1);
    assert.equal(intFlag('v', '-1', 0, -10, 10), -1);
    assert.throws(() => intFlag('port', '9x', 1, 0, 65535), (e: unknown) => e instanceof FlagError && /--port: not an integer/.test(e.message));
    assert.throws(() => intFlag('port', '70000', 1, 0, 65535), /must be between 0 and 65535/);
  });
});
