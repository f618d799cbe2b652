import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { detectNodeCondition } from './node-condition.js';

describe('detectNodeCondition', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cond-'));
  const statePath = join(dir, 'node_state.json');
  const zero = { readMark: async () => Buffer.alloc(32) };
  const marked = { readMark: async () => Buffer.concat([Buffer.alloc(31), Buffer.from([1])]) };
  const disk = (token: Record<string, unknown> | null) => ({ token: async () => token });

  it('fresh without node state, bootstrapped when PCR 15 is marked', async () => {
    assert.equal(await detectNodeCondition(zero, disk(null), statePath), 'fresh');
    assert.equal(await detectNodeCondition(marked, disk(null), statePath), 'bootstrapped');
  });

  it('initialized only when the node state exists and the disk token says so', async () => {
    writeFileSync(statePath, '{}');
    assert.equal(await detectNodeCondition(zero, disk({ type: 'constellation-state-disk', keyslots: [], diskIsInitialized: true }), statePath), 'initialized');
    assert.equal(await detectNodeCondition(zero, disk({ type: 'constellation-state-disk', keyslots: [], diskIsInitialized: false }), statePath), 'fresh');
    assert.equal(await detectNodeCondition(zero, disk(null), statePath), 'fresh');
  });
});
