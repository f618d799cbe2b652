import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { missingComponent } from '@asterism/testing';
import { parsePemChain } from './pck.js';
import { checkRevocation, parseCrl } from './pki.js';
import { buildCrl, makeSyntheticPki } from './synthetic-pki.fixture.js';
import { parseTdxQuote } from './quote.js';
import { errorCode, tdxVector, VECTOR_TIME } from './vectors.fixture.js';

const quote = parseTdxQuote(tdxVector('quote-v4-spr.dat'));
const [pck, platformCa, root] = parsePemChain(quote.pckChainPem, 'PCK chain');

describe('CRLs', () => {
  it('the real PCK Platform CA CRL parses, is signed by the quote’s Platform CA and does not list the PCK', () => {
    const crl = parseCrl(tdxVector('pck-crl.der'), 'PCK CRL');
    assert.ok(crl.revoked.size > 0, 'the June 2023 PCK CRL lists revoked PCKs');
    assert.equal(crl.thisUpdate.toISOString(), '2023-06-08T07:27:52.000Z');
    assert.equal(errorCode(() => checkRevocation(crl, platformCa!, [pck!], VECTOR_TIME, 'PCK CRL')), 'OK');
    assert.equal(errorCode(() => checkRevocation(crl, root!, [pck!], VECTOR_TIME, 'PCK CRL')), 'COLLATERAL_SIGNATURE_INVALID');
  });

  it('the real root CRL is empty and signed by the root', () => {
    const crl = parseCrl(tdxVector('root-crl.der'), 'root CRL');
    assert.equal(crl.revoked.size, 0);
    assert.equal(errorCode(() => checkRevocation(crl, root!, [platformCa!], VECTOR_TIME, 'root CRL')), 'OK');
  });

  it('malformed CRL bytes are COLLATERAL_MALFORMED', () => {
    for (const bad of [Buffer.alloc(0), Buffer.from('3000', 'hex'), tdxVector('pck-crl.der').subarray(0, 100), Buffer.from('not a crl')]) {
      assert.equal(errorCode(() => parseCrl(bad, 'PCK CRL')), 'COLLATERAL_MALFORMED');
    }
  });

  let ca: ReturnType<typeof makeSyntheticPki>['platformCa'];
  try {
    ca = makeSyntheticPki().platformCa;
  } catch {
    it('a CRL listing the PCK (needs openssl)', { skip: missingComponent('openssl', 'apt-get install openssl') || 'openssl failed' }, () => undefined);
    return;
  }
  const table: { name: string; serials: string[]; thisUpdate: string; nextUpdate: string; want: string }[] = [
    { name: 'listing the real PCK serial -> CERT_REVOKED', serials: ['01', pck!.serialNumber], thisUpdate: '2023-06-01', nextUpdate: '2023-07-01', want: 'CERT_REVOKED' },
    { name: 'listing the serial with a leading zero byte -> CERT_REVOKED', serials: [`00${pck!.serialNumber}`], thisUpdate: '2023-06-01', nextUpdate: '2023-07-01', want: 'CERT_REVOKED' },
    { name: 'listing other serials -> accepted', serials: ['01', '7f'], thisUpdate: '2023-06-01', nextUpdate: '2023-07-01', want: 'OK' },
    { name: 'stale (next update before the verification time) -> COLLATERAL_EXPIRED', serials: [], thisUpdate: '2023-05-01', nextUpdate: '2023-06-01', want: 'COLLATERAL_EXPIRED' },
  ];
  for (const c of table) {
    it(`a CRL ${c.name}`, () => {
      const crl = parseCrl(buildCrl(ca.key, c.serials, VECTOR_TIME, { thisUpdate: new Date(c.thisUpdate), nextUpdate: new Date(c.nextUpdate) }), 'PCK CRL');
      assert.equal(errorCode(() => checkRevocation(crl, ca.cert, [pck!], VECTOR_TIME, 'PCK CRL')), c.want);
    });
  }
});
