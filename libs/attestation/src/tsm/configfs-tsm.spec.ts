import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { ConfigfsTsmReportSource } from '../snp/configfs-tsm.js';
import { REPORT_SIZE } from '../snp/report.js';
import { goldenSnp } from '../snp/golden-vectors.fixture.js';
import { ConfigfsTsmQuoteProvider } from '../tdx/quote-provider.js';
import { tdxVector } from '../tdx/vectors.fixture.js';
import { ConfigfsTsm, NODE_TSM_FS, type TsmFailure, type TsmFileSystem, type TsmProvider } from './configfs-tsm.js';
import { FakeConfigfsTsm, replayFirmware } from './configfs-tsm.fixture.js';

const golden = goldenSnp();
const quote = tdxVector('quote-v4-spr.dat');
const dir = mkdtempSync(join(tmpdir(), 'configfs-tsm-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const issuerFailed = (tsm: TsmFailure, re: RegExp) => (e: unknown) => {
  assert.ok(e instanceof AttestationError, String(e));
  assert.equal(e.code, 'ISSUER_FAILED');
  assert.equal(e.details.tsm, tsm, e.message);
  assert.match(e.message, re);
  return true;
};
let n = 0;
const fake = (provider: TsmProvider, out: Buffer, aux = Buffer.alloc(0), entryProvider: string = provider) => new FakeConfigfsTsm(join(dir, `t${n++}`), replayFirmware({ report: out, certTable: aux }), entryProvider);
/** A file system without configfs-tsm where only the given device path exists (or none). */
const noConfigfs = (device?: string): TsmFileSystem => ({ ...NODE_TSM_FS, exists: (p) => p === device });

describe('ConfigfsTsm: one configfs-tsm client for sev_guest and tdx_guest', () => {
  it('sev_guest: writes privlevel and inblob, returns outblob and auxblob, removes the entry', async () => {
    const tsm = fake('sev_guest', golden.vlekReport, Buffer.from('recorded aux'));
    const reportData = Buffer.alloc(64, 0x5a);
    const out = await new ConfigfsTsm('sev_guest', { root: tsm.root, fs: tsm }).report(reportData, 2);
    assert.deepEqual(out, { outblob: golden.vlekReport, auxblob: Buffer.from('recorded aux') });
    assert.deepEqual(tsm.requests, [{ reportData, vmpl: 2 }]);
    assert.deepEqual(readdirSync(tsm.root), [], 'entry removed');
  });

  it('tdx_guest: no privlevel write, the quote from outblob, no auxblob', async () => {
    const tsm = fake('tdx_guest', quote);
    const out = await new ConfigfsTsm('tdx_guest', { root: tsm.root, fs: tsm }).report(Buffer.alloc(64, 1));
    assert.deepEqual(out, { outblob: quote, auxblob: Buffer.alloc(0) });
    assert.deepEqual(tsm.requests, [{ reportData: Buffer.alloc(64, 1), vmpl: 0 }]);
  });

  const cases: Array<[string, TsmProvider, () => { tsm: ConfigfsTsm; inblob?: Buffer }, TsmFailure, RegExp]> = [
    ['sev_guest: neither configfs-tsm nor /dev/sev-guest', 'sev_guest', () => ({ tsm: new ConfigfsTsm('sev_guest', { root: join(dir, 'absent'), fs: noConfigfs() }) }), 'no-interface', /no SEV-SNP guest interface: .*absent \(configfs-tsm\) does not exist and there is no \/dev\/sev-guest - .*sev-guest driver/],
    ['sev_guest: only /dev/sev-guest (an ioctl)', 'sev_guest', () => ({ tsm: new ConfigfsTsm('sev_guest', { root: join(dir, 'absent'), fs: noConfigfs('/dev/sev-guest') }) }), 'ioctl-only', /configfs-tsm is not available .*\/dev\/sev-guest exists but needs an ioctl.*CONFIG_TSM_REPORTS/],
    ['tdx_guest: neither configfs-tsm nor /dev/tdx_guest', 'tdx_guest', () => ({ tsm: new ConfigfsTsm('tdx_guest', { root: join(dir, 'absent'), fs: noConfigfs() }) }), 'no-interface', /no TDX guest interface: .*absent \(configfs-tsm\) does not exist and there is no \/dev\/tdx_guest - .*tdx_guest driver/],
    ['tdx_guest: only the device under a state root', 'tdx_guest', () => ({ tsm: new ConfigfsTsm('tdx_guest', { root: join(dir, 'absent'), fs: noConfigfs('/node/dev/tdx_guest'), devicePath: '/node/dev/tdx_guest' }) }), 'ioctl-only', /\/node\/dev\/tdx_guest exists but needs an ioctl/],
    ['a plain directory, not configfs (no provider attribute appears)', 'sev_guest', () => ({ tsm: new ConfigfsTsm('sev_guest', { root: fake('sev_guest', quote).root, fs: NODE_TSM_FS }) }), 'io', /reading .*provider: ENOENT/],
    ['tdx_guest asked, the SEV-SNP provider answers', 'tdx_guest', () => { const t = fake('tdx_guest', quote, undefined, 'sev_guest'); return { tsm: new ConfigfsTsm('tdx_guest', { root: t.root, fs: t }) }; }, 'provider-mismatch', /provider is "sev_guest", expected "tdx_guest"/],
    ['another writer raced the entry', 'sev_guest', () => { const t = fake('sev_guest', golden.vlekReport); t.raceNext = true; return { tsm: new ConfigfsTsm('sev_guest', { root: t.root, fs: t }) }; }, 'raced', /written by someone else meanwhile \(generation 0 -> 3, 2 writes of ours\)/],
    ['an empty outblob', 'tdx_guest', () => { const t = fake('tdx_guest', Buffer.alloc(0)); return { tsm: new ConfigfsTsm('tdx_guest', { root: t.root, fs: t }) }; }, 'empty', /returned an empty outblob/],
    ['report data of 32 bytes', 'sev_guest', () => ({ tsm: new ConfigfsTsm('sev_guest', { root: dir }), inblob: Buffer.alloc(32) }), 'request-invalid', /report data must be 64 bytes, got 32/],
    ['mkdir failing (read-only configfs) names the entry', 'sev_guest', () => ({ tsm: new ConfigfsTsm('sev_guest', { root: dir, fs: { ...NODE_TSM_FS, exists: () => true, mkdir: async () => Promise.reject(new Error('EACCES')) } }) }), 'io', /creating configfs-tsm entry .*asterism-[0-9a-f]{16}: EACCES/],
  ];
  for (const [name, provider, setup, tsm, re] of cases) {
    it(`refuses with ISSUER_FAILED (${tsm}): ${name}`, async () => {
      const { tsm: client, inblob } = setup();
      assert.equal(client.provider, provider);
      await assert.rejects(client.report(inblob ?? Buffer.alloc(64), provider === 'sev_guest' ? 0 : undefined), issuerFailed(tsm, re));
    });
  }
});

describe('the SEV-SNP and TDX adapters over ConfigfsTsm', () => {
  it('ConfigfsTsmReportSource: the report cut to its size, the certificate table from auxblob', async () => {
    const tsm = fake('sev_guest', Buffer.concat([golden.vlekReport, Buffer.alloc(32, 0xee)]), Buffer.from('aux'));
    const out = await new ConfigfsTsmReportSource(tsm.root, tsm).extendedReport(Buffer.alloc(64), 1);
    assert.deepEqual(out, { report: golden.vlekReport.subarray(0, REPORT_SIZE), certTable: Buffer.from('aux') });
  });

  it('ConfigfsTsmReportSource: a short outblob is ISSUER_FAILED', async () => {
    const tsm = fake('sev_guest', Buffer.alloc(100));
    await assert.rejects(new ConfigfsTsmReportSource(tsm.root, tsm).extendedReport(Buffer.alloc(64), 0), issuerFailed('short', /outblob has 100 bytes, an SNP report has 1184/));
  });

  it('ConfigfsTsmQuoteProvider: report data padded to 64 bytes, the quote returned; more than 64 bytes refused', async () => {
    const tsm = fake('tdx_guest', quote);
    assert.deepEqual(await new ConfigfsTsmQuoteProvider(tsm.root, tsm).getQuote(Buffer.alloc(32, 9)), quote);
    assert.deepEqual(tsm.requests[0]!.reportData, Buffer.concat([Buffer.alloc(32, 9), Buffer.alloc(32)]));
    await assert.rejects(new ConfigfsTsmQuoteProvider(tsm.root, tsm).getQuote(Buffer.alloc(65)), issuerFailed('request-invalid', /at most 64/));
  });

  it('the device named in the error follows the node root', async () => {
    const source = new ConfigfsTsmReportSource(join(dir, 'absent'), noConfigfs(), { devicePath: '/node/dev/sev-guest' });
    await assert.rejects(source.extendedReport(Buffer.alloc(64), 0), issuerFailed('no-interface', /there is no \/node\/dev\/sev-guest/));
    assert.equal(existsSync(join(dir, 'absent')), false);
  });
});
