import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttestationError } from '@asterism/attestation';
import { Variant } from '@asterism/attestation';
import type { TpmClient } from '@asterism/tpm';
import { issuerFor, type NodeInterfaces } from '@asterism/node-platform';

/** The issuer the bootstrapper builds for an SEV-SNP variant (the variant table's issuer factory). */
const snpIssuerFor = (variant: string, openTpm: () => Promise<TpmClient>, node: NodeInterfaces = { stateRoot: '/' }) => issuerFor(Variant.fromString(variant), openTpm, async () => Buffer.alloc(0), node);

describe('the SEV-SNP issuers of the variant table', () => {
  for (const variant of ['azure-sev-snp', 'aws-sev-snp', 'gcp-sev-snp']) {
    it(`${variant}: an issuer of that variant`, () => {
      assert.equal(snpIssuerFor(variant, () => Promise.reject(new Error('no TPM')))?.variant.name, variant);
    });
  }
  it('other variants: their own issuer, not an SEV-SNP one', () => {
    assert.equal(snpIssuerFor('qemu-vtpm', () => Promise.reject(new Error('no TPM'))).variant.name, 'qemu-vtpm');
  });
  it('a node without a TPM gets a typed ISSUER_FAILED when it attests, not a crash at start-up', async () => {
    const issuer = snpIssuerFor('aws-sev-snp', () => Promise.reject(new Error('open /dev/tpmrm0: ENOENT')))!;
    await assert.rejects(issuer.issue(Buffer.from('u'), Buffer.alloc(32)), (e: unknown) => e instanceof AttestationError && e.code === 'ISSUER_FAILED' && /opening TPM/.test(e.message));
  });
});
