import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { parseAmdCertificate, parseAmdChain, parseSignerCertificate, pemCertificates } from './certs.js';
import { SignatureMemo, verifyArk, verifyAsk, verifySignerChain } from './chain.js';
import { parseReport, REPORT_SIZE } from './report.js';
import { verifyReportSignature } from './signature.js';
import { AZURE_VECTOR_TIME, goldenSnp, VLEK_VECTOR_TIME } from './golden-vectors.fixture.js';

const golden = goldenSnp();
const ark = parseAmdCertificate(pemCertificates(golden.arkPem, 'ARK')[0]!, 'ARK');
const code = (c: string) => (e: unknown) => e instanceof AttestationError && e.code === c;

describe('SNP chain and signature: golden vectors', () => {
  it('the Azure report, VCEK and ASK/ARK chain verify end to end at a pinned time', () => {
    const memo = new SignatureMemo();
    const chain = parseAmdChain(golden.certChainPem);
    const vcek = parseSignerCertificate(golden.vcekPem, 'vcek');
    verifyArk(memo, ark, AZURE_VECTOR_TIME);
    verifyAsk(memo, chain.ask!, 'vcek', ark, AZURE_VECTOR_TIME);
    verifySignerChain(memo, vcek, chain.ask!, ark, AZURE_VECTOR_TIME);
    verifyReportSignature(parseReport(golden.azureReport), vcek.publicKey, 'VCEK');
  });

  // The recorded VLEK report and VLEK certificate are not a signing pair (testdata/README.md):
  // the report is tested for parsing, the certificate for its chain.
  it('the VLEK report names a VLEK signer and the VLEK chains to the ASVK and ARK at a pinned time', () => {
    const memo = new SignatureMemo();
    const chain = parseAmdChain(golden.vlekChainPem);
    const vlek = parseSignerCertificate(golden.vlekPem, 'vlek');
    verifySignerChain(memo, vlek, chain.ask!, chain.ark ?? ark, VLEK_VECTOR_TIME);
    assert.equal(parseReport(golden.vlekReport).signingKey, 'vlek');
  });

  it('an expired VLEK at the real clock is CERT_EXPIRED', () => {
    const chain = parseAmdChain(golden.vlekChainPem);
    const vlek = parseSignerCertificate(golden.vlekPem, 'vlek');
    assert.throws(() => verifySignerChain(new SignatureMemo(), vlek, chain.ask!, chain.ark ?? ark, new Date()), code('CERT_EXPIRED'));
  });

  const tampers: Array<[string, number]> = [
    ['one bit of the signature R', REPORT_SIZE - 512],
    ['one bit of REPORT_DATA', 0x50],
    ['one bit of the measurement', 0x90],
  ];
  for (const [name, offset] of tampers) {
    it(`refuses ${name} with REPORT_SIGNATURE_INVALID`, () => {
      const bytes = Buffer.from(golden.azureReport);
      bytes[offset]! ^= 0x01;
      const vcek = parseSignerCertificate(golden.vcekPem, 'vcek');
      assert.throws(() => verifyReportSignature(parseReport(bytes), vcek.publicKey, 'VCEK'), code('REPORT_SIGNATURE_INVALID'));
    });
  }
});
