import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createPrivateKey, sign, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import * as asn1js from 'asn1js';
import { missingComponent } from '@asterism/testing';
import { parsePemChain } from './pck.js';
import { checkRevocation, parseCrl } from './pki.js';
import { parseTdxQuote } from './quote.js';
import { errorCode, tdxVector, VECTOR_TIME } from './vectors.fixture.js';

const quote = parseTdxQuote(tdxVector('quote-v4-spr.dat'));
const [pck, platformCa, root] = parsePemChain(quote.pckChainPem, 'PCK chain');

/** A self-signed P-256 CA made by openssl, to sign CRLs Intel never issued. */
function makeTestCa(): { cert: X509Certificate; keyPem: string; cleanup: () => void } | string {
  const dir = mkdtempSync(join(tmpdir(), 'asterism-tdx-crl-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem'), '-subj', '/CN=Asterism test CRL CA', '-days', '2'], { stdio: 'pipe' });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return missingComponent('openssl', 'apt-get install openssl') || 'openssl failed';
  }
  return { cert: new X509Certificate(readFileSync(join(dir, 'c.pem'))), keyPem: readFileSync(join(dir, 'k.pem'), 'utf8'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A DER CRL (v2, ecdsa-with-SHA256) listing `serials`, signed with `keyPem`. */
function buildCrl(keyPem: string, serialsHex: string[], thisUpdate: Date, nextUpdate: Date): Buffer {
  const alg = new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: '1.2.840.10045.4.3.2' })] });
  const name = new asn1js.Sequence({
    value: [new asn1js.Set({ value: [new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: '2.5.4.3' }), new asn1js.Utf8String({ value: 'Asterism test CRL CA' })] })] })],
  });
  const revoked = new asn1js.Sequence({
    value: serialsHex.map((s) => new asn1js.Sequence({ value: [new asn1js.Integer({ valueHex: Buffer.from(s, 'hex') }), new asn1js.UTCTime({ valueDate: thisUpdate })] })),
  });
  const tbs = new asn1js.Sequence({ value: [new asn1js.Integer({ value: 1 }), alg, name, new asn1js.UTCTime({ valueDate: thisUpdate }), new asn1js.UTCTime({ valueDate: nextUpdate }), revoked] });
  const tbsDer = Buffer.from(tbs.toBER());
  const signature = sign('sha256', tbsDer, createPrivateKey(keyPem));
  return Buffer.from(new asn1js.Sequence({ value: [tbs, alg, new asn1js.BitString({ valueHex: signature })] }).toBER());
}


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

  const ca = makeTestCa();
  if (typeof ca === 'string') {
    it('a CRL listing the PCK (needs openssl)', { skip: ca }, () => undefined);
    return;
  }
  after(ca.cleanup);
  const table: { name: string; serials: string[]; thisUpdate: string; nextUpdate: string; want: string }[] = [
    { name: 'listing the real PCK serial -> CERT_REVOKED', serials: ['01', pck!.serialNumber], thisUpdate: '2023-06-01', nextUpdate: '2023-07-01', want: 'CERT_REVOKED' },
    { name: 'listing the serial with a leading zero byte -> CERT_REVOKED', serials: [`00${pck!.serialNumber}`], thisUpdate: '2023-06-01', nextUpdate: '2023-07-01', want: 'CERT_REVOKED' },
    { name: 'listing other serials -> accepted', serials: ['01', '7f'], thisUpdate: '2023-06-01', nextUpdate: '2023-07-01', want: 'OK' },
    { name: 'stale (next update before the verification time) -> COLLATERAL_EXPIRED', serials: [], thisUpdate: '2023-05-01', nextUpdate: '2023-06-01', want: 'COLLATERAL_EXPIRED' },
  ];
  for (const c of table) {
    it(`a CRL ${c.name}`, () => {
      const crl = parseCrl(buildCrl(ca.keyPem, c.serials, new Date(c.thisUpdate), new Date(c.nextUpdate)), 'PCK CRL');
      assert.equal(errorCode(() => checkRevocation(crl, ca.cert, [pck!], VECTOR_TIME, 'PCK CRL')), c.want);
    });
  }
});
