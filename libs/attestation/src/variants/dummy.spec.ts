import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DummyIssuer, DummyValidator } from './dummy.js';
import { AttestationError } from '../errors.js';

describe('dummy variant', () => {
  it('issues the reference JSON shape', async () => {
    const doc = await new DummyIssuer().issue(Buffer.from([1, 2]), Buffer.from([3]));
    assert.equal(Buffer.from(doc).toString(), '{"UserData":"AQI=","Nonce":"Aw=="}');
  });

  it('round-trips user data when the nonce matches', async () => {
    const doc = await new DummyIssuer().issue(Buffer.from('user'), Buffer.from('nonce'));
    assert.equal(Buffer.from(await new DummyValidator().validate(doc, Buffer.from('nonce'))).toString(), 'user');
  });

  it('accepts Go-produced JSON with other key casing and null fields', async () => {
    const doc = Buffer.from('{"userdata":null,"NONCE":"AQID"}');
    assert.equal((await new DummyValidator().validate(doc, Buffer.from([1, 2, 3]))).length, 0);
  });

  it('rejects a wrong nonce with the reference message', async () => {
    const doc = await new DummyIssuer().issue(Buffer.from('u'), Buffer.from([0xab]));
    await assert.rejects(
      new DummyValidator().validate(doc, Buffer.from([0xcd])),
      (e: unknown) => e instanceof AttestationError && e.code === 'NONCE_MISMATCH' && e.message === 'invalid nonce: expected ab, got cd',
    );
  });

  for (const [name, doc] of [
    ['garbage', 'not json'],
    ['array', '[]'],
    ['bad base64', '{"UserData":"!!","Nonce":"AA=="}'],
    ['number', '{"UserData":1,"Nonce":"AA=="}'],
  ] as const) {
    it(`rejects ${name} as DOCUMENT_MALFORMED`, async () => {
      await assert.rejects(new DummyValidator().validate(Buffer.from(doc), Buffer.from([0])), (e: unknown) => e instanceof AttestationError && e.code === 'DOCUMENT_MALFORMED');
    });
  }
});
