import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCrl } from './pki.js';
import { errorCode, tdxVector } from './vectors.fixture.js';

/** The real root CRL with its thisUpdate (the first UTCTime) given tag `tag` and a non-digit as first character. */
function badTime(tag: number): Buffer {
  const der = Buffer.from(tdxVector('root-crl.der'));
  const at = der.indexOf(Buffer.from('170d', 'hex')); // UTCTime, 13 characters
  assert.ok(at > 0 && der.subarray(at + 2, at + 15).toString('latin1') === '230403102251Z', 'thisUpdate of the real root CRL');
  der[at] = tag;
  der[at + 2] = 'x'.charCodeAt(0);
  return der;
}

// Found by the foreign-exception gate (tools/fuzz): asn1js throws a plain Error on such a GeneralizedTime.
describe('CRL times', () => {
  it('a GeneralizedTime that is not a time is COLLATERAL_MALFORMED (not a plain asn1js error)', () => {
    assert.equal(errorCode(() => parseCrl(badTime(0x18), 'root CRL')), 'COLLATERAL_MALFORMED');
  });
});
