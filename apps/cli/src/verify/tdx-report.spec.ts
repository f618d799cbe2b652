import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeAzureTdxInstanceInfo, encodeDocument, encodeTdxDocument, parseTdxQuote } from '@asterism/attestation';
import { td15Collateral, TD15_VECTOR_TIME, tdxVector, vectorCollateral } from '@asterism/attestation/testing';
import { formatTdxReport, RecordingTdxVerifier, tdBodyOf } from './tdx-report.js';

const quote = tdxVector('quote-v4-spr.dat');
const collateral = vectorCollateral();

describe('asterism verify: TDX report', () => {
  const body = tdBodyOf(encodeTdxDocument({ rawQuote: quote, userData: Buffer.alloc(0) }))!;

  it('finds the TD body in a qemu-tdx document and prints MRTD + RTMR0..3 as indices 0..4', () => {
    const text = formatTdxReport(body, undefined);
    assert.match(text, new RegExp(` {2}0 {2}MRTD {3}${body.mrTd.toString('hex')}`));
    assert.match(text, new RegExp(` {2}3 {2}RTMR2 {2}${body.rtmrs[2].toString('hex')}`));
    assert.match(text, /TEE TCB SVN {2}03000400000000000000000000000000/);
    assert.equal(tdBodyOf(Buffer.from('{"not":"tdx"}')), undefined);
  });

  it('finds the TD body in an azure-tdx vTPM document (the quote in its instance info)', () => {
    const doc = encodeDocument({ attestation: null, instanceInfo: encodeAzureTdxInstanceInfo({ attestationReport: quote, runtimeData: Buffer.from('{}') }), userData: Buffer.alloc(0) });
    assert.deepEqual(tdBodyOf(doc)!.mrTd, body.mrTd);
    assert.equal(tdBodyOf(encodeDocument({ attestation: null, instanceInfo: Buffer.from('{"AttestationReport":"AAAA","RuntimeData":""}'), userData: Buffer.alloc(0) })), undefined);
  });

  it('prints the failing DCAP check with its code and fields (real quote, June 2023 collateral)', () => {
    const rec = new RecordingTdxVerifier();
    assert.throws(() => rec.verify(parseTdxQuote(quote), collateral, new Date('2023-06-20T00:00:00Z')));
    assert.match(formatTdxReport(body, rec.last), /DCAP: failing check TCB_LEVEL_NOT_FOUND: .*"teeTcbSvn":"03000400000000000000000000000000".*"belowLowestLevel":\["sgx\[0\] 3 < 5","sgx\[1\] 3 < 5","sgx\[4\] 2 < 3","sgx\[7\] 2 < 3","tdx\[2\] 4 < 5"\]/);
    assert.throws(() => rec.verify(parseTdxQuote(quote), collateral, new Date('2026-01-01T00:00:00Z')));
    assert.match(formatTdxReport(body, rec.last), /failing check COLLATERAL_EXPIRED/);
  });

  it('prints the TCB status of a verified quote', () => {
    const rec = new RecordingTdxVerifier({
      verify: (q) => ({ quote: q, fmspc: '50806f000000', pckIssuer: 'Intel SGX PCK Platform CA', tcb: { status: 'SWHardeningNeeded', platformStatus: 'SWHardeningNeeded', qeStatus: 'UpToDate', moduleStatus: undefined, tcbDate: '2023-02-15T00:00:00Z', advisoryIds: ['INTEL-SA-00615'] } }),
    });
    rec.verify(parseTdxQuote(quote), collateral, new Date());
    const text = formatTdxReport(body, rec.last);
    assert.match(text, /TCB status SWHardeningNeeded \(platform SWHardeningNeeded, QE UpToDate\), TCB date 2023-02-15T00:00:00Z, FMSPC 50806f000000/);
    assert.match(text, /advisories: INTEL-SA-00615/);
  });

  it('a TD 1.5 quote (real, v5): TEE TCB SVN2 and MRSERVICETD are shown with the DCAP verdict', () => {
    const td15 = tdxVector('quote-v5-td15-emr.dat');
    const body15 = tdBodyOf(encodeTdxDocument({ rawQuote: td15, userData: Buffer.alloc(0) }))!;
    const rec = new RecordingTdxVerifier();
    assert.throws(() => rec.verify(parseTdxQuote(td15), td15Collateral(), TD15_VECTOR_TIME));
    const text = formatTdxReport(body15, rec.last);
    assert.match(text, /TEE TCB SVN2 0d010300000000000000000000000000 \(TD 1\.5: the TDX module running now\)\nMRSERVICETD {2}0{96}/);
    assert.match(text, /DCAP: failing check TCB_LEVEL_NOT_FOUND: .*"belowLowestLevel":\["sgx\[7\] 3 < 5"\]/);
    assert.ok(!formatTdxReport(body, undefined).includes('MRSERVICETD'));
  });

  it('a relaunch advice is shown under the verdict', () => {
    const rec = new RecordingTdxVerifier({
      verify: (q) => ({ quote: q, fmspc: '90c06f000000', pckIssuer: 'Intel SGX PCK Platform CA', tcb: { status: 'TDRelaunchAdvised', platformStatus: 'UpToDate', qeStatus: 'UpToDate', moduleStatus: 'OutOfDate', relaunchAdvised: true, tcbDate: '2024-11-13T00:00:00Z', advisoryIds: [] } }),
    });
    rec.verify(parseTdxQuote(quote), collateral, new Date());
    assert.match(formatTdxReport(body, rec.last), /TCB status TDRelaunchAdvised \(platform UpToDate, QE UpToDate, TDX module OutOfDate\).*\n {6}relaunch advised: the TD launched under an out-of-date TDX module/);
  });
});

