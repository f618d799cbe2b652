import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DummyIssuer, type Issuer } from '@asterism/attestation';
import { PerCallIssuer } from './per-call-issuer.js';

/** An issuer that records how many documents are in flight over its connection. */
function recordingOpener(events: string[], fail = (_n: number) => false) {
  let opened = 0;
  let open = 0;
  return () => {
    const n = ++opened;
    open++;
    events.push(`open ${n} (${open} open)`);
    const issuer: Issuer = {
      variant: new DummyIssuer().variant,
      issue: async (userData, nonce) => {
        await new Promise((r) => setTimeout(r, 5));
        if (fail(n)) throw new Error(`tpm failure ${n}`);
        return new DummyIssuer().issue(userData, nonce);
      },
    };
    return {
      issuer,
      close: async () => {
        open--;
        events.push(`close ${n}`);
      },
    };
  };
}

describe('PerCallIssuer', () => {
  it('opens a connection per document, one at a time, and closes each one', async () => {
    const events: string[] = [];
    const issuer = new PerCallIssuer(new DummyIssuer().variant, recordingOpener(events));
    const docs = await Promise.all([1, 2, 3].map((i) => issuer.issue(Buffer.from('VerifyService'), Buffer.from([i]))));
    assert.equal(docs.length, 3);
    assert.deepEqual(events, ['open 1 (1 open)', 'close 1', 'open 2 (1 open)', 'close 2', 'open 3 (1 open)', 'close 3']);
  });

  it('a failed issuance closes its connection, reports its error, and the next call still runs', async () => {
    const events: string[] = [];
    const issuer = new PerCallIssuer(new DummyIssuer().variant, recordingOpener(events, (n) => n === 1));
    const [first, second] = await Promise.allSettled([issuer.issue(Buffer.from('u'), Buffer.from('a')), issuer.issue(Buffer.from('u'), Buffer.from('b'))]);
    assert.equal(first.status, 'rejected');
    assert.match(String((first as PromiseRejectedResult).reason), /tpm failure 1/);
    assert.equal(second.status, 'fulfilled');
    assert.deepEqual(events, ['open 1 (1 open)', 'close 1', 'open 2 (1 open)', 'close 2']);
  });
});
