import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { DummyIssuer, DummyValidator } from '@asterism/attestation';
import { clusterIdPcr, clusterIdRtmr, parseClusterId, verifyRunningNode, VERIFY_USER_DATA, type AttestationSource } from './running-node.js';

const issuing = (userData: Buffer): AttestationSource => ({ getAttestation: (_e, nonce) => new DummyIssuer().issue(userData, nonce) });

describe('verify a running node', () => {
  it('clusterIdPcr is one PCR_Event extend of a zero PCR with SHA256(cluster ID)', () => {
    const id = Buffer.alloc(32, 3);
    const want = createHash('sha256').update(Buffer.concat([Buffer.alloc(32), createHash('sha256').update(id).digest()])).digest();
    assert.deepEqual(clusterIdPcr(id), want);
  });

  it('clusterIdPcr / clusterIdRtmr match the worked example of docs/protocol/key-hierarchy.md', () => {
    const id = Buffer.from('fdb2f1753774fc73773199fc65f3df9c803176ccb88c9851ba73a3de276cddc8', 'hex');
    assert.equal(clusterIdPcr(id).toString('hex'), '84f5b69861cd9abfb41bb3adbc2e60e9ef583f5a0551e7dd50583cf6a9a17b95');
    assert.equal(clusterIdRtmr(id).toString('hex'), 'c7edab08ffef975c9859a0f0e478b05682bc50cf5e10f8242355190b016e351672b72dde0f07835bd41fa68e523e63b4');
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

  it('an unreachable node is NODE_UNREACHABLE; --cluster-id on a variant without a mark register (dummy) is CLUSTER_ID_UNSUPPORTED', async () => {
    await assert.rejects(verifyRunningNode({ getAttestation: async () => Promise.reject(new Error('14 UNAVAILABLE: connect ECONNREFUSED')) }, new DummyValidator(), { endpoint: 'n:1', timeoutMs: 1000 }), { code: 'NODE_UNREACHABLE' });
    await assert.rejects(verifyRunningNode(issuing(VERIFY_USER_DATA), new DummyValidator(), { endpoint: 'n:1', timeoutMs: 1000, clusterId: Buffer.alloc(32) }), { code: 'CLUSTER_ID_UNSUPPORTED' });
  });
});
