import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttestationError } from './errors.js';
import { cloudProviderFromString } from './variant.js';
import { Variant, variantsForProvider } from './variants/table.js';

describe('Variant', () => {
  const table: Array<[string, string]> = [
    ['dummy', '1.3.9900.1.1'],
    ['aws-nitro-tpm', '1.3.9900.2.1'],
    ['aws-sev-snp', '1.3.9900.2.2'],
    ['gcp-sev-es', '1.3.9900.3.1'],
    ['gcp-sev-snp', '1.3.9900.3.2'],
    ['azure-sev-snp', '1.3.9900.4.1'],
    ['azure-trustedlaunch', '1.3.9900.4.2'],
    ['azure-tdx', '1.3.9900.4.3'],
    ['qemu-vtpm', '1.3.9900.5.1'],
    ['qemu-tdx', '1.3.9900.5.99'],
  ];
  for (const [name, oid] of table) {
    it(`${name} has OID ${oid} both ways`, () => {
      assert.equal(Variant.fromString(name).oid, oid);
      assert.equal(Variant.fromOid(oid).name, name);
      assert.equal(String(Variant.fromString(name)), name);
    });
  }

  it('is exact and case-sensitive', () => {
    for (const bad of ['QEMU-VTPM', 'azure-trusted-launch', '', 'qemu-vtpm ']) {
      assert.throws(
        () => Variant.fromString(bad),
        (e: unknown) => e instanceof AttestationError && e.code === 'VARIANT_UNKNOWN' && e.message === `unknown OID: ${JSON.stringify(bad)}`,
      );
    }
  });

  it('compares by OID', () => {
    assert.ok(Variant.fromString('qemu-vtpm').equals(Variant.fromOid('1.3.9900.5.1')));
    assert.ok(!Variant.fromString('qemu-vtpm').equals(Variant.fromString('dummy')));
    assert.equal(Variant.all().length, 10);
  });
});

describe('cloud providers', () => {
  it('parses case-insensitively, stackit is OpenStack', () => {
    assert.equal(cloudProviderFromString('AWS'), 'AWS');
    assert.equal(cloudProviderFromString('Azure'), 'Azure');
    assert.equal(cloudProviderFromString('gcp'), 'GCP');
    assert.equal(cloudProviderFromString('QeMu'), 'QEMU');
    assert.equal(cloudProviderFromString('stackit'), 'OpenStack');
    assert.equal(cloudProviderFromString('other'), 'Unknown');
  });

  it('maps providers to variants, default first', () => {
    assert.deepEqual(variantsForProvider('AWS').map(String), ['aws-sev-snp', 'aws-nitro-tpm']);
    assert.deepEqual(variantsForProvider('Azure').map(String), ['azure-sev-snp', 'azure-tdx', 'azure-trustedlaunch']);
    assert.deepEqual(variantsForProvider('GCP').map(String), ['gcp-sev-snp', 'gcp-sev-es']);
    assert.deepEqual(variantsForProvider('QEMU').map(String), ['qemu-vtpm']);
    assert.deepEqual(variantsForProvider('OpenStack').map(String), ['qemu-vtpm']);
    assert.deepEqual(variantsForProvider('Unknown').map(String), ['dummy']);
  });
});
