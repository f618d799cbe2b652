import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DummyIssuer, Variant } from '@asterism/attestation';
import type { DenyEntry } from '@asterism/node-attestation';
import { DenyListCheck } from './deny-list-check.js';
import { JoinError } from './errors.js';

const DISK = 'aaaaaaaa-0000-4000-8000-00000000000a';
const entry: DenyEntry = { kind: 'disk', id: DISK, node: 'worker-1', reason: 'MeasurementMismatch (PCR[9]): PCR[9] differs', since: '2026-11-26T12:00:00Z' };

describe('DenyListCheck', () => {
  it('a deny-listed disk is refused with QUARANTINED naming the node and the reason', async () => {
    const check = new DenyListCheck({ find: async (q) => (q.diskUuid === DISK ? entry : undefined) }, () => undefined);
    await assert.rejects(check.check(DISK, 'ipv4:127.0.0.2:5000'), (e: unknown) => {
      assert.ok(e instanceof JoinError);
      assert.equal(e.code, 'QUARANTINED');
      assert.equal(e.message, `disk ${DISK} is quarantined (node worker-1): MeasurementMismatch (PCR[9]): PCR[9] differs`);
      return true;
    });
    await check.check('bbbbbbbb-0000-4000-8000-00000000000b', 'ipv4:127.0.0.2:5000');
  });

  it('asks with the peer\'s attestation key digest when the connection carries a document', async () => {
    const asked: unknown[] = [];
    const doc = Buffer.from(await new DummyIssuer().issue(Buffer.alloc(0), Buffer.alloc(32)));
    const check = new DenyListCheck({ find: async (q) => (asked.push(q), undefined) }, () => ({ variant: Variant.fromString('dummy'), document: doc }));
    await check.check(DISK, 'peer');
    assert.deepEqual(asked, [{ diskUuid: DISK, akDigest: 'none:dummy' }]);
  });

  it('a failing deny-list read propagates (the ticket issuer turns it into KUBERNETES_UNAVAILABLE: fail closed)', async () => {
    const check = new DenyListCheck({ find: async () => Promise.reject(new Error('apiserver down')) }, () => undefined);
    await assert.rejects(check.check(DISK, 'peer'), /apiserver down/);
  });
});
