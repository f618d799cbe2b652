import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AttestationError } from '../errors.js';
import type { DcapCollateral } from './collateral.js';
import { DcapVerifier } from './verifier.js';
import { errorCode, tdxVector, VECTOR_OFFSETS, VECTOR_TIME, vectorCollateral } from './vectors.fixture.js';

const quote = tdxVector('quote-v4-spr.dat');
const collateral = vectorCollateral();
const verifier = new DcapVerifier();

function flip(buf: Buffer, offset: number): Buffer {
  const out = Buffer.from(buf);
  out[offset] = out[offset]! ^ 0x01;
  return out;
}


describe('DcapVerifier with the real production quote and its PCS collateral', () => {
  it('authenticates the quote end to end at a pinned time inside the collateral validity', () => {
    const a = verifier.authenticate(quote, collateral, VECTOR_TIME);
    assert.equal(a.pckIssuer, 'Intel SGX PCK Platform CA');
    assert.equal(a.pckTcb.fmspc.toString('hex'), '50806f000000');
    assert.equal(a.pckTcb.pceSvn, 11);
    assert.deepEqual(a.pckTcb.sgxComponents.slice(0, 8), [3, 3, 2, 2, 2, 1, 0, 2]);
    assert.equal(a.tcbInfo.tcbEvaluationDataNumber, 15);
    assert.equal(a.qeIdentity.isvProdId, 2);
    assert.equal(a.quote.trailingLength, 39);
  });

  it('the platform TCB is below every level of the June 2023 TCB info: refused with TCB_LEVEL_NOT_FOUND naming the SVNs', () => {
    // The PCK certificate's SGX components (3,3,2,2,2,1,0,2), PCE SVN 11 and TEE TCB SVN 3.0.4
    // against the lowest level Intel lists (5,5,2,2,3,1,0,3 / PCE 5 / 3.0.5): four SGX components
    // and TDX component 2 are below it, so Intel lists no level for this platform.
    assert.throws(
      () => verifier.verify(quote, collateral, VECTOR_TIME),
      (err: AttestationError) => {
        assert.equal(err.code, 'TCB_LEVEL_NOT_FOUND');
        assert.deepEqual(err.details, {
          check: 'platform-tcb',
          sgxComponents: [3, 3, 2, 2, 2, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0],
          pceSvn: 11,
          teeTcbSvn: '03000400000000000000000000000000',
          lowestLevel: { sgxComponents: [5, 5, 2, 2, 3, 1, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0], pceSvn: 5, tdxComponents: [3, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], tcbDate: '2018-01-04T00:00:00Z' },
          belowLowestLevel: ['sgx[0] 3 < 5', 'sgx[1] 3 < 5', 'sgx[4] 2 < 3', 'sgx[7] 2 < 3', 'tdx[2] 4 < 5'],
        });
        return true;
      },
    );
  });

  const tamperedCollateral = (patch: Partial<DcapCollateral>): DcapCollateral => ({ ...collateral, ...patch });
  const tcbInfoTampered = collateral.tcbInfo.replace('"tcbEvaluationDataNumber":15', '"tcbEvaluationDataNumber":16');
  const qeIdentityTampered = collateral.qeIdentity.replace('"isvprodid":2', '"isvprodid":3');
  const pem = quote.subarray(VECTOR_OFFSETS.pckChain).toString('latin1');
  const firstB64 = pem.indexOf('\n', pem.indexOf('-----BEGIN')) + 200;
  const pckTampered = Buffer.from(quote);
  pckTampered[VECTOR_OFFSETS.pckChain + firstB64] = pckTampered[VECTOR_OFFSETS.pckChain + firstB64] === 0x41 ? 0x42 : 0x41;
  const foreignRoot = tdxVector('tcbinfo-issuer-chain.pem').toString('utf8').split('-----END CERTIFICATE-----')[0] + '-----END CERTIFICATE-----\n';

  // The quote header + body and the quote signature share QUOTE_SIGNATURE_INVALID by necessity:
  // nothing in the quote says what the body should be except the ECDSA signature over it, and a
  // verify that fails cannot tell which of message or signature changed. DCAP checks no claim of
  // the body before that signature (unlike SNP's report, whose TCB fields are also in the VCEK),
  // and evaluating the TCB or measurements of an unauthenticated body would only guess. The one
  // body field with an independent expected value, REPORT_DATA, is checked by the validator before
  // DCAP: a REPORT_DATA tamper is NONCE_MISMATCH there (qemu-tdx-dcap.spec.ts), and
  // docs/adr/0012-tdx-dcap-verifier.md records this.
  const cases: { name: string; run: () => unknown; code: string }[] = [
    { name: 'quote body byte (REPORT_DATA)', run: () => verifier.authenticate(flip(quote, VECTOR_OFFSETS.reportData), collateral, VECTOR_TIME), code: 'QUOTE_SIGNATURE_INVALID' },
    { name: 'quote header byte (user data)', run: () => verifier.authenticate(flip(quote, 30), collateral, VECTOR_TIME), code: 'QUOTE_SIGNATURE_INVALID' },
    { name: 'quote signature byte', run: () => verifier.authenticate(flip(quote, VECTOR_OFFSETS.signature + 5), collateral, VECTOR_TIME), code: 'QUOTE_SIGNATURE_INVALID' },
    { name: 'attestation key byte', run: () => verifier.authenticate(flip(quote, VECTOR_OFFSETS.attestationKey + 3), collateral, VECTOR_TIME), code: 'QE_REPORT_DATA_MISMATCH' },
    { name: 'QE report byte', run: () => verifier.authenticate(flip(quote, VECTOR_OFFSETS.qeReport + 10), collateral, VECTOR_TIME), code: 'QE_REPORT_SIGNATURE_INVALID' },
    { name: 'QE auth data byte', run: () => verifier.authenticate(flip(quote, VECTOR_OFFSETS.qeAuthData), collateral, VECTOR_TIME), code: 'QE_REPORT_DATA_MISMATCH' },
    { name: 'PCK certificate byte', run: () => verifier.authenticate(pckTampered, collateral, VECTOR_TIME), code: 'CERT_CHAIN_INVALID' },
    { name: 'TCB info JSON byte', run: () => verifier.authenticate(quote, tamperedCollateral({ tcbInfo: tcbInfoTampered }), VECTOR_TIME), code: 'COLLATERAL_SIGNATURE_INVALID' },
    { name: 'QE identity JSON byte', run: () => verifier.authenticate(quote, tamperedCollateral({ qeIdentity: qeIdentityTampered }), VECTOR_TIME), code: 'COLLATERAL_SIGNATURE_INVALID' },
    { name: 'PCK CRL signature byte', run: () => verifier.authenticate(quote, tamperedCollateral({ pckCrl: flip(Buffer.from(collateral.pckCrl), collateral.pckCrl.length - 5) }), VECTOR_TIME), code: 'COLLATERAL_SIGNATURE_INVALID' },
    { name: 'root CRL swapped for the PCK CRL', run: () => verifier.authenticate(quote, tamperedCollateral({ rootCrl: collateral.pckCrl }), VECTOR_TIME), code: 'COLLATERAL_SIGNATURE_INVALID' },
    { name: 'TCB info and QE identity swapped', run: () => verifier.authenticate(quote, tamperedCollateral({ tcbInfo: collateral.qeIdentity }), VECTOR_TIME), code: 'COLLATERAL_MALFORMED' },
    { name: 'expired collateral at the real clock', run: () => verifier.authenticate(quote, collateral, new Date()), code: 'COLLATERAL_EXPIRED' },
    { name: 'collateral not yet issued (2023-06-10)', run: () => verifier.authenticate(quote, collateral, new Date('2023-06-10T00:00:00Z')), code: 'COLLATERAL_EXPIRED' },
    { name: 'untrusted root', run: () => new DcapVerifier({ trustedRoot: foreignRoot }).authenticate(quote, collateral, VECTOR_TIME), code: 'CERT_CHAIN_INVALID' },
    { name: 'truncated quote', run: () => verifier.authenticate(quote.subarray(0, 700), collateral, VECTOR_TIME), code: 'QUOTE_INVALID' },
  ];
  for (const c of cases) {
    it(`refuses a tampered input: ${c.name} -> ${c.code}`, () => assert.equal(errorCode(c.run), c.code));
  }

  it('the expired-collateral error names the collateral and the window', () => {
    assert.throws(
      () => verifier.authenticate(quote, collateral, new Date('2025-01-01T00:00:00Z')),
      (err: AttestationError) => err.code === 'COLLATERAL_EXPIRED' && err.details.collateral === 'root CA CRL' && err.details.nextUpdate === '2024-04-02T10:22:51.000Z',
    );
  });

  it('warm verifications (memoised signatures) still check every validity window and refuse new tampering', () => {
    const warm = new DcapVerifier();
    warm.authenticate(quote, collateral, VECTOR_TIME);
    warm.authenticate(quote, collateral, VECTOR_TIME);
    assert.equal(errorCode(() => warm.authenticate(quote, collateral, new Date('2023-07-10T00:00:00Z'))), 'COLLATERAL_EXPIRED', 'QE identity past its next update');
    assert.equal(errorCode(() => warm.authenticate(quote, collateral, new Date('2050-01-01T00:00:00Z'))), 'CERT_CHAIN_INVALID', 'root expired');
    assert.equal(errorCode(() => warm.authenticate(quote, tamperedCollateral({ tcbInfo: tcbInfoTampered }), VECTOR_TIME)), 'COLLATERAL_SIGNATURE_INVALID');
    assert.equal(errorCode(() => warm.authenticate(flip(quote, VECTOR_OFFSETS.qeReport + 10), collateral, VECTOR_TIME)), 'QE_REPORT_SIGNATURE_INVALID');
    warm.authenticate(quote, collateral, VECTOR_TIME);
  });

  it('v5 with a TDX 1.0 body is verified: the real quote behind a descriptor fails only the quote signature (Intel signed the v4 bytes)', () => {
    const v5 = Buffer.concat([quote.subarray(0, 48), Buffer.from([2, 0, 0x48, 0x02, 0, 0]), quote.subarray(48)]);
    v5.writeUInt16LE(5, 0);
    assert.equal(errorCode(() => verifier.authenticate(v5, collateral, VECTOR_TIME)), 'QUOTE_SIGNATURE_INVALID');
  });

  it('v5 with a TDX 1.5 body is verified like any other: the v4 bytes behind a TD 1.5 descriptor fail only the quote signature', () => {
    const v5 = Buffer.concat([quote.subarray(0, 48), Buffer.from([3, 0, 0x88, 0x02, 0, 0]), quote.subarray(48, 48 + 584), Buffer.alloc(64), quote.subarray(48 + 584)]);
    v5.writeUInt16LE(5, 0);
    assert.equal(errorCode(() => verifier.authenticate(v5, collateral, VECTOR_TIME)), 'QUOTE_SIGNATURE_INVALID');
  });
});

describe('DcapVerifier fuzzing: single-byte changes of the real quote', () => {
  it('5,000 random byte changes: refused with an AttestationError, or accepted only in the PEM text or the padding, where no signature reaches', () => {
    const warm = new DcapVerifier();
    fc.assert(
      fc.property(fc.integer({ min: 0, max: quote.length - 1 }), fc.integer({ min: 1, max: 255 }), (offset, xor) => {
        const mutated = Buffer.from(quote);
        mutated[offset] = mutated[offset]! ^ xor;
        const got = errorCode(() => warm.authenticate(mutated, collateral, VECTOR_TIME));
        // The PEM text is covered by no signature (the certificates in it are): a whitespace change
        // may still yield the same certificates. Every length field must match exactly.
        return got !== 'OK' || offset >= VECTOR_OFFSETS.pckChain;
      }),
      { numRuns: 5_000 },
    );
  });

  it('the signature data length may not absorb padding bytes (no signature covers it)', () => {
    const longer = Buffer.from(quote);
    longer.writeUInt32LE(longer.readUInt32LE(632) + 32, 632);
    assert.equal(errorCode(() => verifier.authenticate(longer, collateral, VECTOR_TIME)), 'QUOTE_INVALID');
  });
});
