import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { join } from '@asterism/proto';
import { JoinError } from './errors.js';
import { parseJoinRequest, parseRejoinRequest } from './request-validation.js';
import { STUB_PARSERS, UUID, wireRequest } from './stub-request.fixture.js';

describe('parseJoinRequest', () => {
  it('turns a well-formed request into the domain request (CSR and host key parsed once)', () => {
    const req = parseJoinRequest(wireRequest({ isControlPlane: true }), STUB_PARSERS);
    assert.equal(req.diskUuid, UUID);
    assert.equal(req.nodeName, 'node');
    assert.equal(req.csr.nodeName, 'node');
    assert.equal(req.hostKey.wire.toString(), 'ssh-key');
    assert.equal(req.isControlPlane, true);
    assert.deepEqual(req.principals, ['10.0.0.5', 'node']);
  });

  // Malformed requests never become a domain request, so they never reach the keyservice or Kubernetes.
  const invalid: Array<[string, Partial<join.IssueJoinTicketRequest>, RegExp]> = [
    ['empty disk UUID', { diskUuid: '' }, /disk_uuid is empty/],
    ['non-UUID disk id', { diskUuid: '../../etc/passwd' }, /is not a UUID/],
    ['empty CSR', { certificateRequest: Buffer.alloc(0) }, /certificate_request is empty/],
    ['malformed CSR', { certificateRequest: Buffer.from('garbage') }, /certificate_request: CN must start/],
    ['oversized CSR', { certificateRequest: Buffer.alloc(20_000) }, /larger than/],
    ['missing host key', { hostPublicKey: Buffer.alloc(0) }, /host_public_key is empty/],
    ['bad host key', { hostPublicKey: Buffer.from('nope') }, /host_public_key: not an SSH public key/],
    ['principal with a comma', { hostCertificatePrincipals: ['a,b'] }, /invalid host certificate principal/],
    ['too many principals', { hostCertificatePrincipals: Array.from({ length: 65 }, (_, i) => `p${i}`) }, /more than 64/],
    ['node name with a path (system:node:../../etc)', { certificateRequest: Buffer.from('csr:../../etc') }, /not a valid Kubernetes node name/],
    ['node name with a slash', { certificateRequest: Buffer.from('csr:a/b') }, /not a valid Kubernetes node name/],
    ['node name longer than 253', { certificateRequest: Buffer.from(`csr:${'a'.repeat(254)}`) }, /not a valid Kubernetes node name/],
  ];
  for (const [name, over, message] of invalid) {
    it(`rejects ${name} with INVALID_REQUEST`, () => {
      assert.throws(() => parseJoinRequest(wireRequest(over), STUB_PARSERS), (e: unknown) => e instanceof JoinError && e.code === 'INVALID_REQUEST' && message.test(e.message));
    });
  }
});

describe('parseRejoinRequest', () => {
  it('accepts a UUID, refuses anything else with INVALID_REQUEST', () => {
    assert.deepEqual(parseRejoinRequest({ diskUuid: UUID }), { diskUuid: UUID });
    for (const diskUuid of ['', 'not-a-uuid']) assert.throws(() => parseRejoinRequest({ diskUuid }), (e: unknown) => e instanceof JoinError && e.code === 'INVALID_REQUEST');
  });
});
