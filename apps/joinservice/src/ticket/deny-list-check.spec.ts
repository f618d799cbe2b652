import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DummyIssuer, Variant } from '@asterism/attestation';
import type { DenyEntry } from '@asterism/node-attestation';
import type { ResolvedPeer } from '../identity/peer-identity.js';
import { DenyListCheck } from './deny-list-check.js';
import { JoinError } from './errors.js';

const DISK = 'aaaaaaaa-0000-4000-8000-00000000000a';
const peer = (attestation?: ResolvedPeer['attestation']): ResolvedPeer => ({ address: 'ipv4:127.0.0.2:5000', ip: '127.0.0.2', attestation });
const entry: DenyEntry = { kind: 'disk', id: DISK, node: 'worker-1', reason: 'MeasurementMismatch (PCR[9]): PCR[9] differs', since: '2026-11-26T12:00:00Z' };

describe('DenyListCheck', () => {
  it('a deny-listed disk is refused with QUARANTINED naming the node and the reason', async () => {
    const check = new DenyListCheck({ find: async (q) => (q.diskUuid === DISK ? entry : undefined) });
    await assert.rejects(check.checkJoin({ diskUuid: DISK } as never, peer()), (e: unknown) => {
      assert.ok(e instanceof JoinError);
      assert.equal(e.code, 'QUARANTINED');
      assert.equal(e.message, `disk ${DISK} is quarantined (node worker-1): MeasurementMismatch (PCR[9]): PCR[9] differs`);
      return true;
    });
    await check.checkJoin({ diskUuid: 'bbbbbbbb-0000-4000-8000-00000000000b' } as never, peer());
    await assert.rejects(check.checkRejoin({ diskUuid: DISK }, peer()), /quarantined/);
  });

  it('asks with the peer\'s attestation key digest when the connection carries a document', async () => {
    const asked: unknown[] = [];
    const doc = Buffer.from(await new DummyIssuer().issue(Buffer.alloc(0), Buffer.alloc(32)));
    const check = new DenyListCheck({ find: async (q) => (asked.push(q), undefined) });
    await check.checkRejoin({ diskUuid: DISK }, peer({ variant: Variant.fromString('dummy'), document: doc }));
    assert.deepEqual(asked, [{ diskUuid: DISK, akDigest: 'none:dummy' }]);
  });

  it('a failing deny-list read propagates (the ticket issuer turns it into KUBERNETES_UNAVAILABLE: fail closed)', async () => {
    const check = new DenyListCheck({ find: async () => Promise.reject(new Error('apiserver down')) });
    await assert.rejects(check.checkRejoin({ diskUuid: DISK }, peer()), /apiserver down/);
  });
});
