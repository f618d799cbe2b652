/**
 * Wire facts from docs/protocol/grpc-apis.md: method paths, streaming kinds, field numbers and wire types.
 * Expected bytes are written by hand from the protobuf encoding rules (tag = field << 3 | wiretype).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { components, init, join, kms, recoverproto, verify } from './index.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('gRPC method paths', () => {
  it('match the reference', () => {
    assert.equal(init.APIService.init.path, '/init.API/Init');
    assert.equal(init.APIService.init.responseStream, true);
    assert.equal(init.APIService.init.requestStream, false);
    assert.equal(join.APIService.issueJoinTicket.path, '/join.API/IssueJoinTicket');
    assert.equal(join.APIService.issueRejoinTicket.path, '/join.API/IssueRejoinTicket');
    assert.equal(kms.APIService.getDataKey.path, '/kms.API/GetDataKey');
    assert.equal(kms.APIService.getDataKey.responseStream, false);
    assert.equal(recoverproto.APIService.recover.path, '/recoverproto.API/Recover');
    assert.equal(recoverproto.APIService.recover.responseStream, false);
    assert.equal(verify.APIService.getAttestation.path, '/verify.API/GetAttestation');
    assert.equal(verify.APIService.getAttestation.responseStream, false);
  });
});

describe('message encodings', () => {
  it('kms.GetDataKeyRequest: 1 string, 2 uint32', () => {
    // 0a 02 "ab" | 10 20
    assert.equal(hex(kms.GetDataKeyRequest.encode({ dataKeyId: 'ab', length: 32 }).finish()), '0a02616210' + '20');
  });

  it('join.IssueJoinTicketRequest field numbers 1-5', () => {
    const bytes = join.IssueJoinTicketRequest.encode({
      diskUuid: 'u',
      certificateRequest: Buffer.from([1]),
      isControlPlane: true,
      hostPublicKey: Buffer.from([2]),
      hostCertificatePrincipals: ['p'],
    }).finish();
    assert.equal(hex(bytes), '0a0175' + '120101' + '1801' + '220102' + '2a0170');
  });

  it('join.IssueJoinTicketResponse field numbers 1-12', () => {
    const bytes = join.IssueJoinTicketResponse.encode({
      stateDiskKey: Buffer.from([1]),
      measurementSalt: Buffer.from([2]),
      measurementSecret: Buffer.from([3]),
      kubeletCert: Buffer.from([4]),
      apiServerEndpoint: 'e',
      token: 't',
      discoveryTokenCaCertHash: 'h',
      controlPlaneFiles: [{ name: 'n', data: Buffer.from([5]) }],
      kubernetesVersion: 'v',
      kubernetesComponents: [{ url: 'u', hash: '', installPath: '', extract: false }],
      authorizedCaPublicKey: Buffer.from([6]),
      hostCertificate: Buffer.from([7]),
    }).finish();
    assert.equal(
      hex(bytes),
      '0a0101' + '120102' + '1a0103' + '220104' + '2a0165' + '320174' + '3a0168' + '4206' + '0a016e' + '120105' + '4a0176' + '5203' + '0a0175' + '5a0106' + '620107',
    );
  });

  it('init.InitRequest skips reserved field 4 and uses 1-3, 5-11', () => {
    const bytes = init.InitRequest.encode({
      kmsUri: 'k',
      storageUri: 's',
      measurementSalt: Buffer.from([1]),
      kubernetesVersion: 'v',
      conformanceMode: true,
      kubernetesComponents: [],
      initSecret: Buffer.from([2]),
      clusterName: 'c',
      apiserverCertSans: ['a'],
      serviceCidr: 'x',
    }).finish();
    assert.equal(hex(bytes), '0a016b' + '120173' + '1a0101' + '2a0176' + '3001' + '420102' + '4a0163' + '520161' + '5a0178');
  });

  it('init.InitResponse oneof arms 1-3', () => {
    assert.equal(hex(init.InitResponse.encode({ initFailure: { error: 'e' } }).finish()), '1203' + '0a0165');
    assert.equal(hex(init.InitResponse.encode({ log: { log: Buffer.from([9]) } }).finish()), '1a03' + '0a0109');
    const ok = init.InitResponse.encode({ initSuccess: { kubeconfig: Buffer.from([1]), ownerId: Buffer.alloc(0), clusterId: Buffer.from([3]) } }).finish();
    assert.equal(hex(ok), '0a06' + '0a0101' + '1a0103');
  });

  it('components.Component fields 1-4 and rejoin messages', () => {
    assert.equal(hex(components.Component.encode({ url: 'u', hash: 'h', installPath: 'p', extract: true }).finish()), '0a0175120168' + '1a0170' + '2001');
    assert.equal(hex(join.IssueRejoinTicketResponse.encode({ stateDiskKey: Buffer.from([1]), measurementSecret: Buffer.from([2]) }).finish()), '0a0101120102');
  });

  it('decodes what it encodes and rejects truncated input', () => {
    const msg = { dataKeyId: '00000000-0000-0000-0000-000000000000', length: 32 };
    assert.deepEqual(kms.GetDataKeyRequest.decode(kms.GetDataKeyRequest.encode(msg).finish()), msg);
    const bytes = kms.GetDataKeyRequest.encode(msg).finish();
    assert.throws(() => kms.GetDataKeyRequest.decode(bytes.subarray(0, 10)));
  });

  it('recoverproto.RecoverMessage uses fields 3 and 4 only; RecoverResponse is empty', () => {
    // 1a 01 "k" | 22 01 "s"
    assert.equal(hex(recoverproto.RecoverMessage.encode({ kmsUri: 'k', storageUri: 's' }).finish()), '1a016b' + '220173');
    assert.equal(hex(recoverproto.RecoverResponse.encode({}).finish()), '');
  });

  it('verify.GetAttestationRequest nonce is field 2; response attestation is field 1', () => {
    assert.equal(hex(verify.GetAttestationRequest.encode({ nonce: Buffer.from([7]) }).finish()), '120107');
    assert.equal(hex(verify.GetAttestationResponse.encode({ attestation: Buffer.from([9]) }).finish()), '0a0109');
  });
});
