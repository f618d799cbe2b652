import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { DummyIssuer, DummyValidator } from '@asterism/attestation';
import { clusterIdPcr, parseClusterId, verifyRunningNode, VERIFY_USER_DATA, type AttestationSource } from './running-node.js';

const issuing = (userData: Buffer): AttestationSource => ({ getAttestation: (_e, nonce) => new DummyIssuer().issue(userData, nonce) });

describe('verify a running node', () => {
  it('clusterIdPcr is one PCR_Event extend of a zero PCR with SHA256(cluster ID)', () => {
    const id = Buffer.alloc(32, 3);
    const want = createHash('sha256').update(Buffer.concat([Buffer.alloc(32), createHash('sha256').update(id).digest()])).digest();
    assert.deepEqual(clusterIdPcr(id), want);
  });

  for (const [name, text, ok] of [
    ['base64 as in asterism-id.json', Buffer.alloc(32, 1).toString('base64'), true],
    ['64 hex digits', 'ab'.repeat(32), true],
    ['too short', Buffer.alloc(16, 1).toString('base64'), false],
    ['garbage', 'not a cluster id!', false],
  ] as const) {
    it(`parseClusterId: ${name}`, () => {
      if (ok) assert.equal(parseClusterId(text).length, 32);
      else assert.throws(() => parseClusterId(text), /invalid --cluster-id/);
    });
  }

  it('accepts a document bound to "VerifyService" and the fresh nonce', async () => {
    const r = await verifyRunningNode(issuing(VERIFY_USER_DATA), new DummyValidator(), { endpoint: 'n:30081', timeoutMs: 1000 });
    assert.equal(r.accepted, true);
  });

  it('refuses a document over other user data (e.g. one issued for aTLS)', async () => {
    const r = await verifyRunningNode(issuing(Buffer.from('something else')), new DummyValidator(), { endpoint: 'n:30081', timeoutMs: 1000 });
    assert.equal(r.accepted, false);
    assert.match(!r.attestation.ok ? r.attestation.error.message : '', /not bound to the verification service/);
  });

  it('refuses a replayed document (other nonce)', async () => {
    const old = await new DummyIssuer().issue(VERIFY_USER_DATA, Buffer.alloc(32, 1));
    const r = await verifyRunningNode({ getAttestation: async () => old }, new DummyValidator(), { endpoint: 'n:30081', timeoutMs: 1000 });
    assert.equal(r.accepted, false);
  });

  it('an unreachable node is NODE_UNREACHABLE; --cluster-id on a variant without PCRs is CLUSTER_ID_UNSUPPORTED', async () => {
    await assert.rejects(verifyRunningNode({ getAttestation: async () => Promise.reject(new Error('14 UNAVAILABLE: connect ECONNREFUSED')) }, new DummyValidator(), { endpoint: 'n:1', timeoutMs: 1000 }), { code: 'NODE_UNREACHABLE' });
    await assert.rejects(verifyRunningNode(issuing(VERIFY_USER_DATA), new DummyValidator(), { endpoint: 'n:1', timeoutMs: 1000, clusterId: Buffer.alloc(32) }), { code: 'CLUSTER_ID_UNSUPPORTED' });
  });
});
