import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { checkNitroImage, type ImageTpmSupportLookup } from './aws-nitro-tpm.js';

const doc = (identity: Record<string, unknown> | null) => ({ attestation: null, instanceInfo: identity === null ? null : Buffer.from(JSON.stringify(identity)), userData: Buffer.alloc(0) });
const ID = { region: 'eu-west-1', imageId: 'ami-0123456789abcdef0', pendingTime: '2026-11-20T08:15:00Z' };

/** In-memory DescribeImages: TpmSupport per AMI; unknown AMIs fail like EC2 does. */
const images = (known: Record<string, string | undefined>): ImageTpmSupportLookup & { asked: string[] } => {
  const asked: string[] = [];
  return {
    asked,
    tpmSupport: async (region, imageId) => {
      asked.push(`${region}/${imageId}`);
      if (!Object.hasOwn(known, imageId)) throw new Error(`InvalidAMIID.NotFound: ${imageId}`);
      return known[imageId];
    },
  };
};

describe('aws-nitro-tpm: AMI TpmSupport check', () => {
  it('accepts TpmSupport v2.0, asking in the document\'s region', async () => {
    const lookup = images({ [ID.imageId]: 'v2.0' });
    await checkNitroImage(doc(ID), lookup);
    assert.deepEqual(lookup.asked, ['eu-west-1/ami-0123456789abcdef0']);
  });

  const cases: Array<[string, Record<string, unknown> | null, Record<string, string | undefined>, string]> = [
    ['TpmSupport unset', ID, { [ID.imageId]: undefined }, 'TPM_SUPPORT_MISSING'],
    ['TpmSupport v1.0', ID, { [ID.imageId]: 'v1.0' }, 'TPM_SUPPORT_MISSING'],
    ['TpmSupport V2.0 (case differs)', ID, { [ID.imageId]: 'V2.0' }, 'TPM_SUPPORT_MISSING'],
    ['DescribeImages fails', ID, {}, 'CLOUD_API_FAILED'],
    ['no identity document', null, {}, 'DOCUMENT_MALFORMED'],
    ['region is not a region', { ...ID, region: 'eu-west-1/../x' }, {}, 'DOCUMENT_MALFORMED'],
    ['imageId is not an AMI id', { ...ID, imageId: 'ami-../../x' }, {}, 'DOCUMENT_MALFORMED'],
  ];
  for (const [name, identity, known, code] of cases) {
    it(`refuses: ${name} (${code})`, async () => {
      const lookup = images(known);
      await assert.rejects(checkNitroImage(doc(identity), lookup), (e: unknown) => e instanceof AttestationError && e.code === code);
      if (code === 'DOCUMENT_MALFORMED') assert.deepEqual(lookup.asked, [], 'nothing is asked for a malformed document');
    });
  }
});
