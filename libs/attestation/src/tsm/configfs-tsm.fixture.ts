/**
 * Test fixture (spec files only): a directory that behaves like Linux configfs-tsm for a provider
 * (`sev_guest` by default, or `tdx_guest`). Creating an entry directory makes the kernel's
 * attribute files appear (`provider`, `generation`, `privlevel`); each write to `privlevel` or
 * `inblob` bumps `generation`, and writing `inblob` makes the "firmware" answer in `outblob` (the
 * SEV-SNP report or the TDX quote) and `auxblob` (SEV-SNP's certificate table, when not empty).
 * The firmware is a signer with a synthetic hierarchy or a replay of recorded bytes.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { ExtendedReport } from '../snp/configfs-tsm.js';
import type { TsmFileSystem } from './configfs-tsm.js';

/** What the fake firmware answers for 64 bytes of REPORT_DATA at a privilege level (SEV-SNP VMPL; 0 for TDX). */
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
    if (basename(path) === 'privlevel') this.bump(dirname(path));
    if (basename(path) !== 'inblob') return;
    const entry = dirname(path);
    const vmpl = Number(readFileSync(join(entry, 'privlevel'), 'utf8').trim());
    const reportData = Buffer.from(data);
    this.requests.push({ reportData, vmpl });
    const { report, certTable } = this.firmware(reportData, vmpl);
    writeFileSync(join(entry, 'outblob'), report);
    if (certTable.length > 0) writeFileSync(join(entry, 'auxblob'), certTable);
    this.bump(entry);
  }

  /** The kernel counts every write to an entry's inputs. */
  private bump(entry: string): void {
    const gen = join(entry, 'generation');
    writeFileSync(gen, `${Number(readFileSync(gen, 'utf8').trim()) + 1}\n`);
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
