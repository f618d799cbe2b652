import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { ConfigfsTsmReportSource, NODE_TSM_FS, type TsmFileSystem } from './configfs-tsm.js';
import { REPORT_SIZE } from './report.js';
import { goldenSnp } from './test-fixtures.js';
import { FakeConfigfsTsm, replayFirmware } from './tsm-fixture.js';

const golden = goldenSnp();
const dir = mkdtempSync(join(tmpdir(), 'configfs-tsm-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const issuerFailed = (re: RegExp) => (e: unknown) => {
  assert.ok(e instanceof AttestationError, String(e));
  assert.equal(e.code, 'ISSUER_FAILED');
  assert.match(e.message, re);
  return true;
};

describe('ConfigfsTsmReportSource over a directory that behaves like configfs-tsm', () => {
  it('replays recorded bytes: writes inblob and privlevel, returns outblob and auxblob, removes the entry', async () => {
    const recorded = { report: Buffer.concat([golden.vlekReport, Buffer.alloc(32, 0xee)]), certTable: Buffer.from('recorded aux') };
    const tsm = new FakeConfigfsTsm(join(dir, 'replay'), replayFirmware(recorded));
    const reportData = Buffer.alloc(64, 0x5a);
    const out = await new ConfigfsTsmReportSource(tsm.root, tsm).extendedReport(reportData, 2);
    assert.deepEqual(out.report, golden.vlekReport.subarray(0, REPORT_SIZE), 'outblob cut to the report size');
    assert.deepEqual(out.certTable, recorded.certTable);
    assert.deepEqual(tsm.requests, [{ reportData, vmpl: 2 }]);
    assert.deepEqual(readdirSync(tsm.root), [], 'entry removed');
  });

  const cases: Array<[string, () => { source: ConfigfsTsmReportSource; reportData?: Buffer }, RegExp]> = [
    [
      'neither configfs-tsm nor /dev/sev-guest',
      () => ({ source: new ConfigfsTsmReportSource(join(dir, 'absent'), { ...NODE_TSM_FS, exists: (p) => p !== '/dev/sev-guest' && existsSync(p) }) }),
      /no SEV-SNP guest interface: .*absent \(configfs-tsm\) does not exist and there is no \/dev\/sev-guest/,
    ],
    [
      'only /dev/sev-guest (ioctl, unusable from Node)',
      () => ({ source: new ConfigfsTsmReportSource(join(dir, 'absent'), { ...NODE_TSM_FS, exists: (p) => p === '/dev/sev-guest' }) }),
      /configfs-tsm is not available .*\/dev\/sev-guest exists but needs an ioctl.*CONFIG_TSM_REPORTS/,
    ],
    [
      'a TDX provider',
      () => {
        const tsm = new FakeConfigfsTsm(join(dir, 'tdx'), replayFirmware({ report: golden.vlekReport, certTable: Buffer.alloc(0) }), 'tdx_guest');
        return { source: new ConfigfsTsmReportSource(tsm.root, tsm) };
      },
      /provider is "tdx_guest", expected "sev_guest"/,
    ],
    [
      'another writer raced the entry (generation moved)',
      () => {
        const tsm = new FakeConfigfsTsm(join(dir, 'race'), replayFirmware({ report: golden.vlekReport, certTable: Buffer.alloc(0) }));
        tsm.raceNext = true;
        return { source: new ConfigfsTsmReportSource(tsm.root, tsm) };
      },
      /written by someone else meanwhile \(generation 1 -> 2\)/,
    ],
    [
      'a short outblob',
      () => {
        const tsm = new FakeConfigfsTsm(join(dir, 'short'), replayFirmware({ report: Buffer.alloc(100), certTable: Buffer.alloc(0) }));
        return { source: new ConfigfsTsmReportSource(tsm.root, tsm) };
      },
      /outblob has 100 bytes, an SNP report has 1184/,
    ],
    ['REPORT_DATA of 32 bytes', () => ({ source: new ConfigfsTsmReportSource(join(dir, 'x'), NODE_TSM_FS), reportData: Buffer.alloc(32) }), /REPORT_DATA must be 64 bytes, got 32/],
  ];
  for (const [name, setup, re] of cases) {
    it(`refuses with ISSUER_FAILED: ${name}`, async () => {
      const { source, reportData } = setup();
      await assert.rejects(source.extendedReport(reportData ?? Buffer.alloc(64), 0), issuerFailed(re));
    });
  }

  it('mkdir failing (read-only configfs) names the entry', async () => {
    const fs: TsmFileSystem = { ...NODE_TSM_FS, exists: () => true, mkdir: async () => Promise.reject(new Error('EACCES')) };
    await assert.rejects(new ConfigfsTsmReportSource(dir, fs).extendedReport(Buffer.alloc(64), 0), issuerFailed(/creating configfs-tsm entry .*asterism-[0-9a-f]{16}: EACCES/));
  });
});
