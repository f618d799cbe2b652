/**
 * Test fixture (spec files only): a directory that behaves like Linux configfs-tsm for the
 * sev_guest provider. Creating an entry directory makes the kernel's attribute files appear
 * (`provider`, `generation`, `privlevel`); writing `inblob` bumps `generation` and makes the
 * "firmware" answer in `outblob` (the report) and `auxblob` (the certificate table). The firmware
 * is either a signer with a synthetic AMD hierarchy or a replay of recorded bytes.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { ExtendedReport, TsmFileSystem } from './configfs-tsm.js';

/** What the fake firmware answers for 64 bytes of REPORT_DATA at a VMPL. */
export type TsmFirmware = (reportData: Buffer, vmpl: number) => ExtendedReport;

/** Firmware that replays recorded bytes whatever is asked. */
export const replayFirmware =
  (recorded: ExtendedReport): TsmFirmware =>
  () =>
    recorded;

/** The configfs-tsm-like directory; `requests` records every inblob written. */
export class FakeConfigfsTsm implements TsmFileSystem {
  readonly requests: Array<{ reportData: Buffer; vmpl: number }> = [];
  /** Set to make the next report request look raced by another writer (generation moves twice). */
  raceNext = false;

  constructor(
    readonly root: string,
    public firmware: TsmFirmware,
    private readonly provider = 'sev_guest',
  ) {
    mkdirSync(root, { recursive: true });
  }

  async mkdir(path: string): Promise<void> {
    mkdirSync(path);
    writeFileSync(join(path, 'provider'), `${this.provider}\n`);
    writeFileSync(join(path, 'generation'), '0\n');
    writeFileSync(join(path, 'privlevel'), '0\n');
  }

  async rmdir(path: string): Promise<void> {
    rmSync(path, { recursive: true, force: true });
  }

  async writeFile(path: string, data: Uint8Array): Promise<void> {
    writeFileSync(path, data);
    if (basename(path) !== 'inblob') return;
    const entry = dirname(path);
    const vmpl = Number(readFileSync(join(entry, 'privlevel'), 'utf8').trim());
    const reportData = Buffer.from(data);
    this.requests.push({ reportData, vmpl });
    const { report, certTable } = this.firmware(reportData, vmpl);
    writeFileSync(join(entry, 'outblob'), report);
    if (certTable.length > 0) writeFileSync(join(entry, 'auxblob'), certTable);
    const generation = Number(readFileSync(join(entry, 'generation'), 'utf8').trim()) + 1;
    writeFileSync(join(entry, 'generation'), `${generation}\n`);
  }

  async readFile(path: string): Promise<Buffer> {
    const data = await readFile(path);
    if (this.raceNext && basename(path) === 'outblob') {
      this.raceNext = false;
      const gen = join(dirname(path), 'generation');
      writeFileSync(gen, `${Number(readFileSync(gen, 'utf8').trim()) + 1}\n`);
    }
    return data;
  }

  exists(path: string): boolean {
    return existsSync(path);
  }
}
