/** The boot's network stage: waits while the metadata source is unreachable, and only then. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createNopLogger } from '@asterism/logger';
import { MetadataError } from '@asterism/metadata';
import { NetworkWaitError, waitForMetadata } from './network-wait.js';

/** A source failing with `errors` in turn, then answering; a clock that the sleeps advance. */
function scripted(errors: unknown[]) {
  let t = 0;
  let calls = 0;
  return {
    source: {
      self: async () => {
        calls++;
        const e = errors.shift();
        if (e !== undefined) throw e;
        return { name: 'worker-0' };
      },
    },
    opts: { now: () => t, sleep: async (ms: number) => void (t += ms), intervalMs: 500, timeoutMs: 5_000 },
    calls: () => calls,
  };
}
const down = () => new MetadataError('METADATA_UNAVAILABLE', 'GET /self: connect ENETUNREACH 10.42.0.1:8080');

describe('waitForMetadata', () => {
  it('returns at once when the metadata source answers', async () => {
    const s = scripted([]);
    assert.equal(await waitForMetadata(s.source, createNopLogger(), s.opts), 0);
    assert.equal(s.calls(), 1);
  });

  it('retries while the source is unreachable (no route, refused, absent endpoint) and reports the wait', async () => {
    const s = scripted([down(), down(), new MetadataError('METADATA_ENDPOINT_ABSENT', 'not on AWS')]);
    assert.equal(await waitForMetadata(s.source, createNopLogger(), s.opts), 1500);
    assert.equal(s.calls(), 4);
  });

  it('does not wait on answers that show the network works (404, malformed): the next stage reports them', async () => {
    for (const e of [new MetadataError('METADATA_NOT_FOUND', 'GET /self: 404'), new MetadataError('METADATA_MALFORMED', 'not JSON'), new Error('a bug')]) {
      const s = scripted([e]);
      assert.equal(await waitForMetadata(s.source, createNopLogger(), s.opts), 0);
      assert.equal(s.calls(), 1);
    }
  });

  it('gives up after the timeout with NETWORK_UNAVAILABLE naming the last error', async () => {
    const s = scripted(Array.from({ length: 100 }, down));
    await assert.rejects(waitForMetadata(s.source, createNopLogger(), s.opts), (e: unknown) => e instanceof NetworkWaitError && e.code === 'NETWORK_UNAVAILABLE' && /within 5 s .*ENETUNREACH/.test(e.message));
    assert.equal(s.calls(), 11);
  });
});
