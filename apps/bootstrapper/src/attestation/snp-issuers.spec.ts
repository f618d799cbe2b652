import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttestationError } from '@asterism/attestation';
import { snpIssuerFor } from './snp-issuers.js';

describe('snpIssuerFor', () => {
  for (const variant of ['azure-sev-snp', 'aws-sev-snp', 'gcp-sev-snp']) {
    it(`${variant}: an issuer of that variant`, () => {
      assert.equal(snpIssuerFor(variant, () => Promise.reject(new Error('no TPM')))?.variant.name, variant);
    });
  }
  it('other variants: none', () => {
    assert.equal(snpIssuerFor('qemu-vtpm', () => Promise.reject(new Error('no TPM'))), undefined);
  });
  it('a node without a TPM gets a typed ISSUER_FAILED when it attests, not a crash at start-up', async () => {
    const issuer = snpIssuerFor('aws-sev-snp', () => Promise.reject(new Error('open /dev/tpmrm0: ENOENT')))!;
    await assert.rejects(issuer.issue(Buffer.from('u'), Buffer.alloc(32)), (e: unknown) => e instanceof AttestationError && e.code === 'ISSUER_FAILED' && /opening TPM/.test(e.message));
  });
});
