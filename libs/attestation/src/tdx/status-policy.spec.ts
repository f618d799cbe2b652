import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { parseTcbStatuses } from './status-policy.js';

describe('parseTcbStatuses (the --tdx-accepted-tcb-statuses list)', () => {
  const ok: Array<[string, string, string[]]> = [
    ['only current platforms', 'UpToDate', ['UpToDate']],
    ['any case, spaces, duplicates dropped', ' uptodate, SWHARDENINGNEEDED ,UpToDate', ['UpToDate', 'SWHardeningNeeded']],
    ['out of date accepted (a TCB recovery in progress)', 'UpToDate,OutOfDate,OutOfDateConfigurationNeeded', ['UpToDate', 'OutOfDate', 'OutOfDateConfigurationNeeded']],
    ['the TD 1.5 relaunch advice', 'UpToDate,tdrelaunchadvised,TDRelaunchAdvisedConfigurationNeeded', ['UpToDate', 'TDRelaunchAdvised', 'TDRelaunchAdvisedConfigurationNeeded']],
  ];
  for (const [name, list, want] of ok) it(`accepts: ${name}`, () => assert.deepEqual(parseTcbStatuses(list), want));

  const bad: Array<[string, string, RegExp]> = [
    ['an unknown name', 'UpToDate,Fine', /unknown TDX TCB status "Fine" \(valid: UpToDate, SWHardeningNeeded/],
    ['an empty entry', 'UpToDate,', /unknown TDX TCB status ""/],
    ['Revoked', 'UpToDate,Revoked', /Revoked cannot be accepted/],
    ['a list without UpToDate', 'SWHardeningNeeded', /must include UpToDate \(got SWHardeningNeeded\)/],
  ];
  for (const [name, list, re] of bad) {
    it(`refuses ${name} with CONFIG_INVALID`, () => assert.throws(() => parseTcbStatuses(list), (e: unknown) => e instanceof AttestationError && e.code === 'CONFIG_INVALID' && re.test(e.message)));
  }
});
