import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { parseQeIdentity, parseTcbInfo, type TcbStatus, type TdxTcbInfo } from './collateral.js';
import type { PckTcb } from './pck.js';
import { parseTdxQuote, type TdReportBody } from './quote.js';
import { applyStatusPolicy, converge, evaluateTcb } from './tcb.js';
import { DEFAULT_ACCEPTED_TCB_STATUSES } from './verifier.js';
import { tdxVector, vectorCollateral } from './vectors.fixture.js';

// The real collateral and quote; the platform TCB is varied to walk the real TCB levels.
const collateral = vectorCollateral();
const tcbInfo = parseTcbInfo(collateral.tcbInfo).value;
const qeIdentity = parseQeIdentity(collateral.qeIdentity).value;
const quote = parseTdxQuote(tdxVector('quote-v4-spr.dat'));
const currentSgx = [5, 5, 2, 2, 3, 1, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0];

function pck(sgxComponents: number[], pceSvn: number): PckTcb {
  return { sgxComponents, pceSvn, cpuSvn: Buffer.from(sgxComponents), pceId: Buffer.alloc(2), fmspc: Buffer.from('50806f000000', 'hex') };
}

function body(teeTcbSvn: number[], patch: Partial<TdReportBody> = {}): TdReportBody {
  const svn = Buffer.alloc(16);
  teeTcbSvn.forEach((v, i) => (svn[i] = v));
  return { ...quote.body, teeTcbSvn: svn, ...patch };
}

/** The returned string, or the code of the AttestationError thrown. */
function outcome(fn: () => string): string {
  try {
    return fn();
  } catch (err) {
    assert.ok(err instanceof AttestationError);
    return err.code;
  }
}

const errorCode = (fn: () => unknown): string => outcome(() => (fn(), 'OK'));

describe('evaluateTcb on the real June 2023 TCB info and QE identity', () => {
  const cases: { name: string; pck: PckTcb; body: TdReportBody; want: TcbStatus | string }[] = [
    { name: 'current SGX, PCE SVN 11, TDX 3.0.5 -> UpToDate', pck: pck(currentSgx, 11), body: body([3, 0, 5]), want: 'UpToDate' },
    { name: 'higher SVNs everywhere still UpToDate', pck: pck(currentSgx.map((v) => v + 1), 13), body: body([4, 0, 6]), want: 'UpToDate' },
    { name: 'PCE SVN 5..10 -> OutOfDate level', pck: pck(currentSgx, 7), body: body([3, 0, 5]), want: 'OutOfDate' },
    { name: 'PCE SVN 4 -> below every level', pck: pck(currentSgx, 4), body: body([3, 0, 5]), want: 'TCB_LEVEL_NOT_FOUND' },
    { name: 'TDX component 2 at 4 (the real quote) -> below every level', pck: pck(currentSgx, 11), body: body([3, 0, 4]), want: 'TCB_LEVEL_NOT_FOUND' },
    { name: 'SGX component 5 at 2 -> below every level', pck: pck([5, 5, 2, 2, 2, 1, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0], 11), body: body([3, 0, 5]), want: 'TCB_LEVEL_NOT_FOUND' },
    { name: 'module signer differs from tdxModule.mrsigner', pck: pck(currentSgx, 11), body: body([3, 0, 5], { mrSignerSeam: Buffer.alloc(48, 1) }), want: 'COLLATERAL_MISMATCH' },
    { name: 'SEAM attributes differ under the full mask', pck: pck(currentSgx, 11), body: body([3, 0, 5], { seamAttributes: Buffer.from('0100000000000000', 'hex') }), want: 'COLLATERAL_MISMATCH' },
  ];
  for (const c of cases) {
    it(c.name, () => assert.equal(outcome(() => evaluateTcb(tcbInfo, qeIdentity, c.pck, c.body, quote.qeReport).status), c.want));
  }

  it('the QE of the real quote (ISV SVN 4) is UpToDate; SVN 3 has no level; another MRSIGNER or product is refused', () => {
    assert.equal(evaluateTcb(tcbInfo, qeIdentity, pck(currentSgx, 11), body([3, 0, 5]), quote.qeReport).qeStatus, 'UpToDate');
    const qe = (patch: Partial<typeof quote.qeReport>) => ({ ...quote.qeReport, ...patch });
    assert.equal(errorCode(() => evaluateTcb(tcbInfo, qeIdentity, pck(currentSgx, 11), body([3, 0, 5]), qe({ isvSvn: 3 }))), 'TCB_LEVEL_NOT_FOUND');
    assert.equal(errorCode(() => evaluateTcb(tcbInfo, qeIdentity, pck(currentSgx, 11), body([3, 0, 5]), qe({ mrSigner: Buffer.alloc(32) }))), 'QE_IDENTITY_MISMATCH');
    assert.equal(errorCode(() => evaluateTcb(tcbInfo, qeIdentity, pck(currentSgx, 11), body([3, 0, 5]), qe({ isvProdId: 1 }))), 'QE_IDENTITY_MISMATCH');
    assert.equal(errorCode(() => evaluateTcb(tcbInfo, qeIdentity, pck(currentSgx, 11), body([3, 0, 5]), qe({ miscSelect: 1 }))), 'QE_IDENTITY_MISMATCH');
  });

  it('a TDX module identity (TDX_01) decides the module status and skips TEE TCB SVN bytes 0-1 in the platform level', () => {
    const withModule: TdxTcbInfo = {
      ...tcbInfo,
      moduleIdentities: [
        {
          id: 'TDX_01',
          mrSigner: quote.body.mrSignerSeam,
          attributes: Buffer.alloc(8),
          attributesMask: Buffer.alloc(8, 0xff),
          tcbLevels: [
            { isvSvn: 5, tcbStatus: 'UpToDate', tcbDate: '2023-01-01T00:00:00Z' },
            { isvSvn: 2, tcbStatus: 'OutOfDate', tcbDate: '2022-01-01T00:00:00Z' },
          ],
        },
      ],
    };
    assert.equal(evaluateTcb(withModule, qeIdentity, pck(currentSgx, 11), body([5, 1, 5]), quote.qeReport).status, 'UpToDate');
    const old = evaluateTcb(withModule, qeIdentity, pck(currentSgx, 11), body([2, 1, 5]), quote.qeReport);
    assert.deepEqual([old.platformStatus, old.moduleStatus, old.status], ['UpToDate', 'OutOfDate', 'OutOfDate']);
    assert.equal(errorCode(() => evaluateTcb(withModule, qeIdentity, pck(currentSgx, 11), body([1, 1, 5]), quote.qeReport)), 'TCB_LEVEL_NOT_FOUND');
    assert.equal(errorCode(() => evaluateTcb(withModule, qeIdentity, pck(currentSgx, 11), body([5, 2, 5]), quote.qeReport)), 'TDX_MODULE_MISMATCH');
  });
});

describe('converge', () => {
  const table: [TcbStatus, TcbStatus, TcbStatus][] = [
    ['UpToDate', 'UpToDate', 'UpToDate'],
    ['SWHardeningNeeded', 'UpToDate', 'SWHardeningNeeded'],
    ['UpToDate', 'OutOfDate', 'OutOfDate'],
    ['SWHardeningNeeded', 'OutOfDate', 'OutOfDate'],
    ['ConfigurationNeeded', 'OutOfDate', 'OutOfDateConfigurationNeeded'],
    ['ConfigurationAndSWHardeningNeeded', 'OutOfDate', 'OutOfDateConfigurationNeeded'],
    ['UpToDate', 'Revoked', 'Revoked'],
    ['Revoked', 'UpToDate', 'Revoked'],
  ];
  for (const [platform, component, want] of table) {
    it(`${platform} + ${component} -> ${want}`, () => assert.equal(converge(platform, component), want));
  }
});

describe('applyStatusPolicy', () => {
  const tcb = (status: TcbStatus) => ({ status, platformStatus: status, qeStatus: 'UpToDate' as const, moduleStatus: undefined, tcbDate: '2023-02-15T00:00:00Z', advisoryIds: ['INTEL-SA-00106'] });
  const accepted = new Set(DEFAULT_ACCEPTED_TCB_STATUSES);
  for (const s of ['UpToDate', 'SWHardeningNeeded', 'ConfigurationNeeded', 'ConfigurationAndSWHardeningNeeded'] as TcbStatus[]) {
    it(`default accepts ${s}`, () => applyStatusPolicy(tcb(s), accepted));
  }
  for (const s of ['OutOfDate', 'OutOfDateConfigurationNeeded', 'Revoked'] as TcbStatus[]) {
    it(`default refuses ${s} with TCB_STATUS_REJECTED naming status and advisories`, () =>
      assert.throws(() => applyStatusPolicy(tcb(s), accepted), (err: AttestationError) => err.code === 'TCB_STATUS_REJECTED' && err.details.status === s && (err.details.advisoryIds as string[])[0] === 'INTEL-SA-00106'));
  }
  it('a strict policy refuses SWHardeningNeeded', () => assert.throws(() => applyStatusPolicy(tcb('SWHardeningNeeded'), new Set<TcbStatus>(['UpToDate'])), /not accepted/));
});
