import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validatorFromConfigJson, validatorVariants } from './choose.js';
import { dummyVariant } from './variants/dummy.js';
import { registerVariant, Variant } from './variants/table.js';
import { VariantId } from './variant.js';
import { DummyIssuer } from './variants/dummy.js';
import { AttestationError } from './errors.js';

describe('validator choice', () => {
  it('builds the dummy validator from its config and it round-trips a dummy document', async () => {
    const v = validatorFromConfigJson('{"measurements":{}}', 'dummy');
    assert.equal(v.variant.name, 'dummy');
    const nonce = Buffer.alloc(32, 7);
    const doc = await new DummyIssuer().issue(Buffer.from('user'), nonce);
    assert.deepEqual(Buffer.from(await v.validate(doc, nonce)), Buffer.from('user'));
  });

  it('names the variant and the missing source when the process did not provide it', () => {
    assert.throws(
      // azure-tdx needs the process's Intel PCS collateral source (deps.tdx).
      () => validatorFromConfigJson(`{"measurements":{},"qeSVN":0,"pceSVN":0,"teeTCBSVN":"latest","qeVendorID":"latest","xfam":"latest","intelRootKey":""}`, 'azure-tdx'),
      (e: unknown) => e instanceof AttestationError && e.code === 'CONFIG_INVALID' && /azure-tdx/.test(e.message) && /intel-pcs/.test(e.message),
    );
  });

  it('the cloud vTPM variants register themselves and build from measurements-only configs', () => {
    const M = `{"measurements":{"0":{"expected":"${'00'.repeat(32)}","warnOnly":false}}}`;
    for (const variant of ['azure-trustedlaunch', 'aws-nitro-tpm', 'gcp-sev-es']) {
      assert.ok(validatorVariants().includes(variant), variant);
      assert.equal(validatorFromConfigJson(M, variant).variant.name, variant);
    }
  });

  it('refuses to register a variant whose name or OID is taken', () => {
    assert.throws(() => registerVariant({ ...dummyVariant, variant: new VariantId('nope', Variant.fromString('dummy').oid) }), /clashes with dummy/);
    assert.throws(() => registerVariant({ ...dummyVariant, variant: new VariantId('dummy', '1.3.9900.99.1') }), /clashes with dummy/);
    assert.ok(!validatorVariants().includes('nope'));
  });

  it('propagates config errors (bad measurements) as CONFIG_INVALID', () => {
    assert.throws(() => validatorFromConfigJson('{"measurements":{"0":"zz"}}', 'dummy'), (e: unknown) => e instanceof AttestationError && e.code === 'CONFIG_INVALID');
  });
});
