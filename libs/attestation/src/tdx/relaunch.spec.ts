import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { parseTcbInfo, type TcbStatus } from './collateral.js';
import { checkForRelaunch, type RelaunchInputs } from './relaunch.js';
import { td15Collateral } from './vectors.fixture.js';

// The real February 2026 TCB info of the TD 1.5 vector: newest level TDX components 5,0,3;
// module identity TDX_01 newest ISV SVN 6, TDX_03 newest 3.
const tcbInfo = parseTcbInfo(td15Collateral().tcbInfo).value;
const svn2 = (bytes: number[]) => Buffer.from([...bytes, ...Array(16 - bytes.length).fill(0)]);
const stale: RelaunchInputs = { sgx: 'UpToDate', tdx: 'OutOfDate', module: 'OutOfDate', qe: 'UpToDate' };

describe('checkForRelaunch (Intel QVL rules, real TCB info)', () => {
  const cases: { name: string; svn2: number[]; inputs?: Partial<RelaunchInputs>; want: string }[] = [
    { name: 'current module TDX_01 SVN 13 >= 6 and microcode 3 >= 3', svn2: [13, 1, 3], want: 'TDRelaunchAdvised' },
    { name: 'current module TDX_01 SVN 6 (exactly the newest)', svn2: [6, 1, 3], want: 'TDRelaunchAdvised' },
    { name: 'current module TDX_01 SVN 5 (below the newest)', svn2: [5, 1, 3], want: 'OutOfDate' },
    { name: 'TDX late microcode 2 (below the newest level)', svn2: [13, 1, 2], want: 'OutOfDate' },
    { name: 'module major 0: byte 0 against the newest level TDX component 0 (5)', svn2: [5, 0, 3], want: 'TDRelaunchAdvised' },
    { name: 'module major 0 with SVN 4', svn2: [4, 0, 3], want: 'OutOfDate' },
    { name: 'SGX needs configuration', svn2: [13, 1, 3], inputs: { sgx: 'ConfigurationNeeded' }, want: 'TDRelaunchAdvisedConfigurationNeeded' },
    { name: 'platform OutOfDateConfigurationNeeded', svn2: [13, 1, 3], inputs: { tdx: 'OutOfDateConfigurationNeeded' }, want: 'TDRelaunchAdvisedConfigurationNeeded' },
    { name: 'QE out of date: no advice', svn2: [13, 1, 3], inputs: { qe: 'OutOfDate' }, want: 'OutOfDate' },
    { name: 'SGX out of date: no advice', svn2: [13, 1, 3], inputs: { sgx: 'OutOfDate' }, want: 'OutOfDate' },
    { name: 'module up to date (the platform is what is out of date): no advice', svn2: [13, 1, 3], inputs: { module: 'UpToDate' }, want: 'OutOfDate' },
    { name: 'platform up to date: nothing to advise', svn2: [13, 1, 3], inputs: { tdx: 'UpToDate' }, want: 'UpToDate' },
  ];
  for (const c of cases) {
    it(`${c.name} -> ${c.want}`, () => assert.equal(checkForRelaunch(tcbInfo, svn2(c.svn2), { ...stale, ...c.inputs } as RelaunchInputs), c.want as TcbStatus));
  }

  it('a current module the TCB info does not know is TDX_MODULE_MISMATCH naming TEE_TCB_SVN2', () => {
    assert.throws(() => checkForRelaunch(tcbInfo, svn2([13, 2, 3]), stale), (e: AttestationError) => e.code === 'TDX_MODULE_MISMATCH' && e.details.field === 'TEE_TCB_SVN2' && e.details.expected === 'TDX_02');
  });
});
