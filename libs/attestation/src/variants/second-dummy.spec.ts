import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defaultAttestationConfig, encodeAttestationConfig, unmarshalAttestationConfig } from '../attestation-config.js';
import { validatorFromConfigJson, validatorVariants } from '../choose.js';
import { AttestationError } from '../errors.js';
import { defaultsFor } from '../measurement-defaults.js';
import { secondDummyVariant } from './second-dummy.fixture.js';
import { registerVariant, Variant, variantDescriptor, variantsForProvider } from './table.js';

describe('a variant added as one descriptor module (second-dummy, test-only)', () => {
  let unregister: () => void;
  before(() => {
    unregister = registerVariant(secondDummyVariant);
  });
  after(() => unregister());

  it('is known by name and by its own OID', () => {
    assert.equal(Variant.fromString('second-dummy').oid, '1.3.9900.99.1');
    assert.equal(Variant.fromOid('1.3.9900.99.1').name, 'second-dummy');
    assert.ok(Variant.all().some((v) => v.name === 'second-dummy'));
    assert.equal(variantsForProvider('QEMU').map(String).at(-1), 'second-dummy', 'offered by QEMU after its default');
  });

  it('has its config codec, default config and measurements through the generic functions', () => {
    const cfg = defaultAttestationConfig('second-dummy');
    assert.equal(cfg.variant, 'second-dummy');
    assert.equal(encodeAttestationConfig(cfg), '{}');
    assert.equal(unmarshalAttestationConfig('{}', 'second-dummy').measurements.size, 0);
    assert.equal(defaultsFor('QEMU', 'second-dummy').size, 0);
  });

  it('round-trips a document through its issuer and the validator built from its config', async () => {
    assert.ok(validatorVariants().includes('second-dummy'));
    const nonce = Buffer.alloc(32, 9);
    const doc = await variantDescriptor('second-dummy').issuer!({ openTpm: () => Promise.reject(new Error('unused')), eventLog: async () => Buffer.alloc(0), stateRoot: '/' }).issue(Buffer.from('user'), nonce);
    const validator = validatorFromConfigJson('{}', 'second-dummy');
    assert.equal(validator.variant.name, 'second-dummy');
    assert.deepEqual(Buffer.from(await validator.validate(doc, nonce)), Buffer.from('user'));
    await assert.rejects(validator.validate(doc, Buffer.alloc(32)), (e: unknown) => e instanceof AttestationError && e.code === 'NONCE_MISMATCH');
  });

  it('refuses a second registration of the same name or OID', () => {
    assert.throws(() => registerVariant(secondDummyVariant), (e: unknown) => e instanceof AttestationError && /clashes with second-dummy/.test(e.message));
  });
});

describe('removing a registered variant', () => {
  it('takes it out of the table again', () => {
    const remove = registerVariant(secondDummyVariant);
    assert.equal(Variant.fromString('second-dummy').name, 'second-dummy');
    remove();
    assert.throws(() => Variant.fromString('second-dummy'), (e: unknown) => e instanceof AttestationError && e.code === 'VARIANT_UNKNOWN');
  });
});
