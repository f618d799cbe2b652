import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { DummyIssuer, DummyValidator } from '@asterism/attestation';
import { encodeBase64UrlPadded } from '@asterism/crypto';
import { createNopLogger } from '@asterism/logger';
import { verify } from '@asterism/proto';
import { VerificationService, VERIFY_USER_DATA } from './verification-service.js';

describe('verification service (gRPC and HTTP)', () => {
  const service = new VerificationService(new DummyIssuer(), createNopLogger());
  let ports: { grpc: number; http: number };
  let client: verify.APIClient;
  before(async () => {
    ports = await service.listen('127.0.0.1', { grpc: 0, http: 0 });
    client = new verify.APIClient(`127.0.0.1:${ports.grpc}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    client.close();
    await service.close();
  });
  const call = (nonce: Buffer) =>
    new Promise<{ err: grpc.ServiceError | null; res?: verify.GetAttestationResponse }>((resolve) => client.getAttestation({ nonce }, (err, res) => resolve({ err, res })));

  it('gRPC: the document binds user data "VerifyService" and the caller\'s nonce', async () => {
    const nonce = Buffer.from('0123456789abcdef0123456789abcdef');
    const { err, res } = await call(nonce);
    assert.equal(err, null);
    assert.deepEqual(Buffer.from(await new DummyValidator().validate(res!.attestation, nonce)), VERIFY_USER_DATA);
    await assert.rejects(new DummyValidator().validate(res!.attestation, Buffer.from('another nonce')), 'a replay for another nonce fails');
  });

  for (const [name, nonce, code, message] of [
    ['empty nonce', Buffer.alloc(0), grpc.status.INVALID_ARGUMENT, /nonce is required to issue attestation/],
    ['oversized nonce', Buffer.alloc(2048, 1), grpc.status.INVALID_ARGUMENT, /longer than 1024 bytes/],
  ] as const) {
    it(`gRPC: ${name} is InvalidArgument`, async () => {
      const { err } = await call(nonce);
      assert.equal(err?.code, code);
      assert.match(err!.details, message);
    });
  }

  it('HTTP: GET /?nonce=<base64url> answers {"data": base64 document}', async () => {
    const nonce = Buffer.from([0xfb, 0xff, 0x01, 0x02]);
    const res = await fetch(`http://127.0.0.1:${ports.http}/?nonce=${encodeBase64UrlPadded(nonce)}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    const body = (await res.json()) as { data: string };
    assert.deepEqual(Buffer.from(await new DummyValidator().validate(Buffer.from(body.data, 'base64'), nonce)), VERIFY_USER_DATA);
  });

  for (const [name, query] of [
    ['no nonce', ''],
    ['empty nonce', '?nonce='],
    ['two nonces', '?nonce=AQ%3D%3D&nonce=Ag%3D%3D'],
    ['standard base64 alphabet', '?nonce=%2B%2F8%3D'],
    ['missing padding', '?nonce=AQ'],
  ] as const) {
    it(`HTTP: ${name} is 400`, async () => {
      const res = await fetch(`http://127.0.0.1:${ports.http}/${query}`);
      assert.equal(res.status, 400, await res.text());
    });
  }
});
