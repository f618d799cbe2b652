import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttestationError, DummyIssuer, registerValidator, validatorFromConfigJson, validatorVariants } from './index.js';

describe('validator choice', () => {
  it('builds the dummy validator from its config and it round-trips a dummy document', async () => {
    const v = validatorFromConfigJson('{"measurements":{}}', 'dummy');
    assert.equal(v.variant.name, 'dummy');
    const nonce = Buffer.alloc(32, 7);
    const doc = await new DummyIssuer().issue(Buffer.from('user'), nonce);
    assert.deepEqual(Buffer.from(await v.validate(doc, nonce)), Buffer.from('user'));
  });

  it('names the variant and the available ones when no validator is registered', () => {
    assert.throws(
      () => validatorFromConfigJson('{"measurements":{}}', 'aws-nitro-tpm'),
      (e: unknown) => e instanceof AttestationError && e.code === 'CONFIG_INVALID' && /aws-nitro-tpm/.test(e.message) && /dummy/.test(e.message),
    );
  });

  it('refuses to register an unknown variant', () => {
    assert.throws(() => registerValidator('nope', () => { throw new Error('unused'); }), /unknown OID/);
    assert.ok(!validatorVariants().includes('nope'));
  });

  it('propagates config errors (bad measurements) as CONFIG_INVALID', () => {
    assert.throws(() => validatorFromConfigJson('{"measurements":{"0":"zz"}}', 'dummy'), (e: unknown) => e instanceof AttestationError && e.code === 'CONFIG_INVALID');
  });
});
