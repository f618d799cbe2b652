import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { encodeIdentityDocument, parseIdentityDocument } from './identity-document.js';

/** The IMDS answer's shape (as documented by AWS; values made up). */
const IMDS = {
  accountId: '123456789012',
  architecture: 'x86_64',
  availabilityZone: 'us-east-2a',
  billingProducts: null,
  devpayProductCodes: null,
  marketplaceProductCodes: ['abc'],
  imageId: 'ami-0abcdef1234567890',
  instanceId: 'i-0123456789abcdef0',
  instanceType: 't3.medium',
  kernelId: null,
  pendingTime: '2026-11-20T08:15:00Z',
  privateIp: '172.31.1.2',
  ramdiskId: null,
  region: 'us-east-2',
  version: '2017-09-30',
};

describe('EC2 instance identity document', () => {
  it('re-encodes in the reference field order, null lists and empty strings kept', () => {
    const out = encodeIdentityDocument(parseIdentityDocument(JSON.stringify(IMDS))).toString();
    assert.equal(
      out,
      '{"devpayProductCodes":null,"marketplaceProductCodes":["abc"],"availabilityZone":"us-east-2a","privateIp":"172.31.1.2","version":"2017-09-30","region":"us-east-2",' +
        '"instanceId":"i-0123456789abcdef0","billingProducts":null,"instanceType":"t3.medium","accountId":"123456789012","pendingTime":"2026-11-20T08:15:00Z",' +
        '"imageId":"ami-0abcdef1234567890","kernelId":"","ramdiskId":"","architecture":"x86_64"}',
    );
    assert.deepEqual(parseIdentityDocument(out), parseIdentityDocument(JSON.stringify(IMDS)));
  });

  const bad: Array<[string, unknown, string]> = [
    ['not JSON', '{', ''],
    ['a list', '[]', ''],
    ['number region', { ...IMDS, region: 1 }, 'region'],
    ['list of numbers', { ...IMDS, billingProducts: [1] }, 'billingProducts'],
    ['bad pendingTime', { ...IMDS, pendingTime: 'yesterday' }, 'pendingTime'],
  ];
  for (const [name, doc, field] of bad) {
    it(`refuses: ${name}`, () => {
      assert.throws(
        () => parseIdentityDocument(typeof doc === 'string' ? doc : JSON.stringify(doc)),
        (e: unknown) => e instanceof AttestationError && e.code === 'DOCUMENT_MALFORMED' && (field === '' || e.details.field === field),
      );
    });
  }
});
