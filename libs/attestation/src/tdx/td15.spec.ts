import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { missingComponent } from '@asterism/testing';
import { AttestationError } from '../errors.js';
import { makeExtraData } from '../extra-data.js';
import type { Measurement } from '../measurements/measurement.js';
import { parseQeIdentity, parseTcbInfo } from './collateral.js';
import { encodeTdxDocument, tdMeasurements } from './document.js';
import { parsePemChain, readPckTcb } from './pck.js';
import { QemuTdxValidator } from '../variants/qemu-tdx.js';
import { parseTdxQuote } from './quote.js';
import { makeSyntheticPki, resignedCollateral, resignedQuote, type CollateralEdits, type SyntheticPki } from './synthetic-pki.fixture.js';
import { evaluateTcb } from './tcb.js';
import { DcapVerifier } from './verifier.js';
import { errorCode, TD15_OFFSETS, TD15_VECTOR_TIME, tdxVector, V5_TD15 } from './vectors.fixture.js';

// A real production quote v5 with a TD 1.5 body (TDX module 1.5) and the PCS collateral of its
// platform (testdata/README.md): authenticated with the real Intel root, judged against its TCB info.
const raw = tdxVector(V5_TD15.quote);
const collateral = V5_TD15.collateral();
const at = TD15_VECTOR_TIME;
const intel = () => new DcapVerifier();

function tampered(offset: number, mask = 0x01): Buffer {
  const b = Buffer.from(raw);
  b[offset]! ^= mask;
  return b;
}

describe('the real TDX 1.5 quote v5 (body type 3) with its real collateral', () => {
  it('parses the TD 1.5 body: TEE_TCB_SVN (launch module 1.x SVN 7), TEE_TCB_SVN2 (current module SVN 13), MRSERVICETD', () => {
    const q = parseTdxQuote(raw);
    assert.deepEqual([q.header.version, q.bodyType, q.trailingLength], [5, 3, 0]);
    assert.equal(q.body.teeTcbSvn.toString('hex'), '07010300000000000000000000000000');
    assert.equal(q.body.teeTcbSvn2?.toString('hex'), '0d010300000000000000000000000000');
    assert.equal(q.body.mrServiceTd?.toString('hex'), '00'.repeat(48));
  });

  it('authenticates with the Intel SGX Root CA: PCK chain, CRLs, TCB info, QE identity, QE report, quote signature', () => {
    const a = intel().authenticate(raw, collateral, at);
    assert.deepEqual([a.pckIssuer, a.pckTcb.fmspc.toString('hex'), a.tcbInfo.tcbEvaluationDataNumber], ['Intel SGX PCK Platform CA', '90c06f000000', 18]);
  });

  it('is judged against its TCB info: the platform SEAMLDR ACM SVN (SGX component 7) is below every level -> TCB_LEVEL_NOT_FOUND', () => {
    assert.throws(
      () => intel().verify(raw, collateral, at),
      (err: AttestationError) => err.code === 'TCB_LEVEL_NOT_FOUND' && (err.details.belowLowestLevel as string[]).join() === 'sgx[7] 3 < 5',
    );
  });

  it('with SGX component 7 at the newest level, the real TCB info rates it UpToDate (module TDX_01 SVN 7, QE SVN 4)', () => {
    const q = parseTdxQuote(raw);
    const pck = readPckTcb(parsePemChain(q.pckChainPem, 'PCK')[0]!);
    const raised = { ...pck, sgxComponents: pck.sgxComponents.map((v, i) => (i === 7 ? 5 : v)) };
    const r = evaluateTcb(parseTcbInfo(collateral.tcbInfo).value, parseQeIdentity(collateral.qeIdentity).value, raised, q.body, q.qeReport);
    assert.deepEqual([r.status, r.platformStatus, r.moduleStatus, r.qeStatus, r.relaunchAdvised], ['UpToDate', 'UpToDate', 'UpToDate', 'UpToDate', false]);
  });

  const tampers: { name: string; quote: () => Buffer; code: string }[] = [
    { name: 'TEE_TCB_SVN2 (module SVN)', quote: () => tampered(TD15_OFFSETS.teeTcbSvn2), code: 'QUOTE_SIGNATURE_INVALID' },
    { name: 'TEE_TCB_SVN2 (module major version)', quote: () => tampered(TD15_OFFSETS.teeTcbSvn2 + 1, 0x02), code: 'QUOTE_SIGNATURE_INVALID' },
    { name: 'MRSERVICETD', quote: () => tampered(TD15_OFFSETS.mrServiceTd + 47), code: 'QUOTE_SIGNATURE_INVALID' },
    { name: 'body type 3 -> 2 (TD 1.0 with a TD 1.5 size)', quote: () => tampered(TD15_OFFSETS.bodyType, 0x01), code: 'QUOTE_INVALID' },
    { name: 'body type 3 -> 4 (not a TD report)', quote: () => tampered(TD15_OFFSETS.bodyType, 0x07), code: 'QUOTE_INVALID' },
    { name: 'body size 648 -> 649', quote: () => tampered(TD15_OFFSETS.bodySize, 0x01), code: 'QUOTE_INVALID' },
    { name: 'TEE_TCB_SVN', quote: () => tampered(TD15_OFFSETS.teeTcbSvn), code: 'QUOTE_SIGNATURE_INVALID' },
    { name: 'REPORT_DATA', quote: () => tampered(TD15_OFFSETS.reportData), code: 'QUOTE_SIGNATURE_INVALID' },
  ];
  for (const t of tampers) {
    it(`a tampered ${t.name} is refused with ${t.code}`, () => assert.equal(errorCode(() => intel().authenticate(t.quote(), collateral, at)), t.code));
  }

  it('certificate validity: before the PCK is issued is "not yet valid", after it ends "expired", both dates in the details', () => {
    const early = new Date('2017-01-01T00:00:00Z');
    assert.throws(
      () => intel().authenticate(raw, collateral, early),
      (err: AttestationError) =>
        err.code === 'CERT_CHAIN_INVALID' && err.details.reason === 'not-yet-valid' && /is not yet valid at 2017/.test(err.message) && typeof err.details.notBefore === 'string' && typeof err.details.notAfter === 'string',
    );
    const late = new Date('2099-01-01T00:00:00Z');
    assert.throws(() => intel().authenticate(raw, collateral, late), (err: AttestationError) => err.code === 'CERT_CHAIN_INVALID' && err.details.reason === 'expired' && /is expired at 2099/.test(err.message));
  });
});

function pkiOrSkip(): SyntheticPki | string {
  try {
    return makeSyntheticPki(V5_TD15);
  } catch {
    return missingComponent('openssl', 'apt-get install openssl') || 'openssl failed';
  }
}

const pki = pkiOrSkip();
const skip = typeof pki === 'string' ? pki : false;

/** The real TD 1.5 header + body with `edit` applied, re-signed under the stand-in PKI. */
function resigned(p: SyntheticPki, edit: (signed: Buffer) => void = () => undefined): Buffer {
  const signed = Buffer.from(parseTdxQuote(raw).signedBytes);
  edit(signed);
  return resignedQuote(p, signed, V5_TD15);
}

type Identity = { id: string; tcbLevels: { tcb: { isvsvn: number }; tcbDate: string; tcbStatus: string }[] };
/** Module TDX_01: launch SVN 7 is OutOfDate; the newest level needs `newest`. */
const moduleOutOfDate = (newest: number): CollateralEdits => ({
  tcbInfo: (t) => {
    const m = (t.tdxModuleIdentities as Identity[]).find((i) => i.id === 'TDX_01')!;
    m.tcbLevels = [
      { tcb: { isvsvn: newest }, tcbDate: '2025-01-01T00:00:00Z', tcbStatus: 'UpToDate' },
      { tcb: { isvsvn: 4 }, tcbDate: '2024-01-01T00:00:00Z', tcbStatus: 'OutOfDate' },
    ];
  },
});

describe('TDX 1.5 rules on the real TD 1.5 quote re-signed under a stand-in Intel PKI', { skip }, () => {
  const p = pki as SyntheticPki;
  const now = new Date();
  const verifier = (accepted?: ConstructorParameters<typeof DcapVerifier>[0]) => new DcapVerifier({ trustedRoot: p.root.pem, ...accepted });
  const collateralWith = (edits: CollateralEdits = {}) => resignedCollateral(p, now, edits, V5_TD15);

  it('verifies UpToDate when the TCB info has a level the platform meets (module TDX_01, no relaunch advice)', () => {
    const r = verifier().verify(resigned(p), collateralWith(), now);
    assert.deepEqual([r.quote.bodyType, r.tcb.status, r.tcb.moduleStatus, r.tcb.relaunchAdvised], [3, 'UpToDate', 'UpToDate', false]);
  });

  it('launch module out of date, current module (TEE_TCB_SVN2 13) at the newest level -> TDRelaunchAdvised, refused by default', () => {
    assert.throws(
      () => verifier().verify(resigned(p), collateralWith(moduleOutOfDate(13)), now),
      (err: AttestationError) => err.code === 'TCB_STATUS_REJECTED' && err.details.status === 'TDRelaunchAdvised' && err.details.relaunchAdvised === true,
    );
    const accepted = verifier({ acceptedStatuses: ['UpToDate', 'TDRelaunchAdvised'] }).verify(resigned(p), collateralWith(moduleOutOfDate(13)), now);
    assert.deepEqual([accepted.tcb.status, accepted.tcb.moduleStatus], ['TDRelaunchAdvised', 'OutOfDate']);
  });

  it('launch module out of date and the current module below the newest level -> OutOfDate (no relaunch fixes it)', () => {
    assert.throws(() => verifier().verify(resigned(p), collateralWith(moduleOutOfDate(14)), now), (err: AttestationError) => err.code === 'TCB_STATUS_REJECTED' && err.details.status === 'OutOfDate');
  });

  it('a TEE_TCB_SVN2 naming a module the TCB info does not know -> TDX_MODULE_MISMATCH (field TEE_TCB_SVN2)', () => {
    const quote = resigned(p, (b) => (b[TD15_OFFSETS.teeTcbSvn2 + 1] = 2));
    assert.throws(() => verifier().verify(quote, collateralWith(moduleOutOfDate(13)), now), (err: AttestationError) => err.code === 'TDX_MODULE_MISMATCH' && err.details.field === 'TEE_TCB_SVN2');
  });

  it('a TEE_TCB_SVN naming an unknown module -> TDX_MODULE_MISMATCH (field TEE_TCB_SVN)', () => {
    const quote = resigned(p, (b) => (b[TD15_OFFSETS.teeTcbSvn + 1] = 9));
    assert.throws(() => verifier().verify(quote, collateralWith(), now), (err: AttestationError) => err.code === 'TDX_MODULE_MISMATCH' && err.details.field === 'TEE_TCB_SVN');
  });

  it('a re-signed MRSERVICETD is carried through verification (what the attestation config may pin)', () => {
    const quote = resigned(p, (b) => b.fill(0x5a, TD15_OFFSETS.mrServiceTd, TD15_OFFSETS.mrServiceTd + 48));
    assert.equal(verifier().verify(quote, collateralWith(), now).quote.body.mrServiceTd?.toString('hex'), '5a'.repeat(48));
  });

  it('the qemu-tdx validator pins MRSERVICETD from the attestation config: equal passes, different is MRSERVICETD_MISMATCH', async () => {
    const userData = Buffer.from('tls key digest');
    const nonce = Buffer.from('0123456789abcdef0123456789abcdef');
    const service = Buffer.alloc(48, 0x5a);
    const quote = resigned(p, (b) => {
      b.fill(0, TD15_OFFSETS.reportData, TD15_OFFSETS.reportData + 64);
      makeExtraData(userData, nonce).copy(b, TD15_OFFSETS.reportData);
      service.copy(b, TD15_OFFSETS.mrServiceTd);
    });
    const measurements = new Map<number, Measurement>([...tdMeasurements(parseTdxQuote(quote).body)].map(([i, v]) => [i, { expected: Buffer.from(v), validationOpt: 'Enforce' as const }]));
    const validator = (mrServiceTd?: Buffer) =>
      new QemuTdxValidator({ measurements, collateral: { collateral: async () => collateralWith() }, verifier: verifier(), clock: () => now, ...(mrServiceTd ? { mrServiceTd } : {}) });
    const doc = encodeTdxDocument({ rawQuote: quote, userData });
    assert.deepEqual(await validator().validate(doc, nonce), userData);
    assert.deepEqual(await validator(service).validate(doc, nonce), userData);
    await assert.rejects(validator(Buffer.alloc(48, 0x5b)).validate(doc, nonce), (err: AttestationError) => err.code === 'MRSERVICETD_MISMATCH' && err.details.actual === '5a'.repeat(48));
  });
});
