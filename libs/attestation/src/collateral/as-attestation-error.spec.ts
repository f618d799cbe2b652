import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { collateralLookup } from './as-attestation-error.js';
import { CollateralError } from './errors.js';

describe('collateralLookup', () => {
  it('passes the value through', async () => {
    assert.equal(await collateralLookup(async () => 42), 42);
  });

  for (const code of ['COLLATERAL_UNAVAILABLE', 'COLLATERAL_INVALID'] as const) {
    it(`a cache ${code} becomes the AttestationError with that code, message and details`, async () => {
      const cause = new CollateralError(code, 'tdx-pcs collateral for qe-identity is not cached and the cache is offline', { details: { cache: 'tdx-pcs', key: 'qe-identity' } });
      await assert.rejects(
        collateralLookup(() => Promise.reject(cause)),
        (err: unknown) => err instanceof AttestationError && err.code === code && err.message === cause.message && err.details.key === 'qe-identity' && err.cause === cause,
      );
    });
  }

  it('keeps AttestationErrors and other errors as they are', async () => {
    const attestation = new AttestationError('CERT_EXPIRED', 'x');
    await assert.rejects(collateralLookup(() => Promise.reject(attestation)), (err) => err === attestation);
    const other = new TypeError('bug');
    await assert.rejects(collateralLookup(() => Promise.reject(other)), (err) => err === other);
  });
});
