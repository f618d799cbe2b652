import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DummyIssuer, DummyValidator } from '@asterism/attestation';
import { GrpcAttestationSource } from './grpc-attestation-source.js';
import { NodeChecker } from './node-check.js';
import { startVerifyServer, type VerifyServerFixture } from './testing/verify-server.js';

describe('NodeChecker with the dummy variant over real gRPC', () => {
  let node: VerifyServerFixture;
  const checker = new NodeChecker({ source: new GrpcAttestationSource(), timeoutMs: 3000 });
  const validator = new DummyValidator();

  before(async () => {
    node = await startVerifyServer(new DummyIssuer());
  });
  after(async () => node?.stop());

  it('a node answering for our nonce with user data VerifyService is Verified, with its evidence summary', async () => {
    const v = await checker.check({ name: 'w1', endpoint: node.endpoint }, validator);
    assert.equal(v.status, 'Verified', v.message);
    assert.equal(v.reason, 'Verified');
    assert.deepEqual(v.evidence && { variant: v.evidence.variant, registers: v.evidence.registers, akDigest: v.evidence.akDigest }, { variant: 'dummy', registers: 'none', akDigest: 'none:dummy' });
    assert.ok(v.latencyMs >= 0);
  });

  it('a replayed document (an old nonce) is Refused as AttestationInvalid naming the nonce check', async () => {
    node.replayNonce = Buffer.alloc(32, 7);
    try {
      const v = await checker.check({ name: 'w1', endpoint: node.endpoint }, validator);
      assert.equal(v.status, 'Refused');
      assert.equal(v.reason, 'AttestationInvalid');
      assert.equal(v.field, 'NONCE_MISMATCH');
    } finally {
      node.replayNonce = undefined;
    }
  });

  it('a document over other user data (not the verification service) is Refused as UserDataMismatch', async () => {
    node.userData = Buffer.from('Constellation');
    try {
      const v = await checker.check({ name: 'w1', endpoint: node.endpoint }, validator);
      assert.equal(v.status, 'Refused');
      assert.equal(v.reason, 'UserDataMismatch');
    } finally {
      node.userData = Buffer.from('VerifyService');
    }
  });

  it('a node whose service is down is Unreachable (no throw), within the deadline', async () => {
    const down = await startVerifyServer(new DummyIssuer());
    const endpoint = down.endpoint;
    await down.stop();
    const v = await new NodeChecker({ source: new GrpcAttestationSource(), timeoutMs: 1500 }).check({ name: 'w2', endpoint }, validator);
    assert.equal(v.status, 'Unreachable');
    assert.equal(v.evidence, undefined);
    assert.match(v.message, new RegExp(`no attestation from ${endpoint.replace(/\./g, '\\.')}`));
  });
});
