import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { registerValidator, validatorFromConfigJson, validatorVariants } from './choose.js';
import { DummyIssuer } from './dummy.js';
import { AttestationError } from './errors.js';

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
      // azure-tdx registers only with a collateral source (registerAzureTdxValidator).
      () => validatorFromConfigJson(`{"measurements":{},"qeSVN":0,"pceSVN":0,"teeTCBSVN":"latest","qeVendorID":"latest","xfam":"latest","intelRootKey":""}`, 'azure-tdx'),
      (e: unknown) => e instanceof AttestationError && e.code === 'CONFIG_INVALID' && /azure-tdx/.test(e.message) && /dummy/.test(e.message),
    );
  });

  it('the cloud vTPM variants register themselves and build from measurements-only configs', () => {
    const M = `{"measurements":{"0":{"expected":"${'00'.repeat(32)}","warnOnly":false}}}`;
    for (const variant of ['azure-trustedlaunch', 'aws-nitro-tpm', 'gcp-sev-es']) {
      assert.ok(validatorVariants().includes(variant), variant);
      assert.equal(validatorFromConfigJson(M, variant).variant.name, variant);
    }
  });

  it('refuses to register an unknown variant', () => {
    assert.throws(() => registerValidator('nope', () => { throw new Error('unused'); }), /unknown OID/);
    assert.ok(!validatorVariants().includes('nope'));
  });

  it('propagates config errors (bad measurements) as CONFIG_INVALID', () => {
    assert.throws(() => validatorFromConfigJson('{"measurements":{"0":"zz"}}', 'dummy'), (e: unknown) => e instanceof AttestationError && e.code === 'CONFIG_INVALID');
  });
});
