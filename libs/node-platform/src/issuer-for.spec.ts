import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Variant } from '@asterism/attestation';
import { issuerFor } from './issuer-for.js';

const noTpm = () => Promise.reject(new Error('no TPM in unit tests'));

describe('node issuer choice', () => {
  for (const name of ['qemu-vtpm', 'azure-trustedlaunch', 'aws-nitro-tpm', 'gcp-sev-es', 'azure-sev-snp', 'aws-sev-snp', 'gcp-sev-snp', 'azure-tdx', 'dummy']) {
    it(`${name}: an issuer of that variant`, () => assert.equal(issuerFor(Variant.fromString(name), noTpm).variant.name, name));
  }
  it('variants without a TPM issuer (qemu-tdx: see platform.ts) are refused, naming the ones it has', () => {
    assert.throws(() => issuerFor(Variant.fromString('qemu-tdx'), noTpm), /qemu-tdx has no TPM issuer in this build \((?=.*qemu-vtpm)(?=.*gcp-sev-snp)(?=.*azure-tdx)(?!.*qemu-tdx).*dummy.*\)/);
  });
  it('a cloud issuer fails at issue time with its step when the TPM cannot be opened', async () => {
    await assert.rejects(issuerFor(Variant.fromString('gcp-sev-es'), noTpm).issue(Buffer.from('u'), Buffer.alloc(32)), /opening TPM: no TPM in unit tests/);
  });
});
