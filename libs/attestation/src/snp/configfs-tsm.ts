/**
 * Extended SNP reports through Linux configfs-tsm (docs/protocol/sev-snp.md §8): Node cannot
 * issue the /dev/sev-guest ioctl, and configfs-tsm is the kernel's current interface. One report
 * = one entry directory: write inblob (and privlevel), read outblob/auxblob, check the generation
 * did not move (another writer), remove the entry. The file system is a port so tests can use a
 * directory that replays recorded bytes the way configfs serves them.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AttestationError } from '../errors.js';
import { CONFIGFS_TSM_REPORT_DIR } from '../tdx/configfs-tsm.js';
import { REPORT_SIZE } from './report.js';

/** File operations the client needs (node:fs/promises by default). */
export interface TsmFileSystem {
  mkdir(path: string): Promise<void>;
  rmdir(path: string): Promise<void>;
  writeFile(path: string, data: Uint8Array): Promise<void>;
  readFile(path: string): Promise<Buffer>;
  exists(path: string): boolean;
}

/** The real file system. */
export const NODE_TSM_FS: TsmFileSystem = {
  mkdir: async (p) => void (await mkdir(p)),
  rmdir: (p) => rmdir(p),
  writeFile: (p, d) => writeFile(p, d),
  readFile: (p) => readFile(p),
  exists: (p) => existsSync(p),
};

/** One extended report. */
export interface ExtendedReport {
  /** The 0x4A0-byte report. */
  readonly report: Buffer;
  /** The certificate table (may be empty when the host attaches none). */
  readonly certTable: Buffer;
}

/** Produces extended SNP reports for 64 bytes of REPORT_DATA. */
export interface SnpReportSource {
  extendedReport(reportData: Uint8Array, vmpl: number, signal?: AbortSignal): Promise<ExtendedReport>;
}

const failed = (message: string, details: Record<string, unknown> = {}) => new AttestationError('ISSUER_FAILED', message, { details: { step: 'getting SNP report', ...details } });

/** configfs-tsm client. */
export class ConfigfsTsmReportSource implements SnpReportSource {
  constructor(
    private readonly root: string = CONFIGFS_TSM_REPORT_DIR,
    private readonly fs: TsmFileSystem = NODE_TSM_FS,
  ) {}

  async extendedReport(reportData: Uint8Array, vmpl: number, signal?: AbortSignal): Promise<ExtendedReport> {
    if (reportData.length !== 64) throw failed(`REPORT_DATA must be 64 bytes, got ${reportData.length}`);
    this.requireInterface();
    const entry = join(this.root, `asterism-${randomBytes(8).toString('hex')}`);
    try {
      await this.fs.mkdir(entry);
    } catch (err) {
      throw failed(`creating configfs-tsm entry ${entry}: ${(err as Error).message}`, { path: entry });
    }
    try {
      signal?.throwIfAborted();
      return await this.request(entry, reportData, vmpl);
    } finally {
      await this.fs.rmdir(entry).catch(() => undefined);
    }
  }

  /** A clear error when neither configfs-tsm nor an ioctl-free alternative exists. */
  private requireInterface(): void {
    if (this.fs.exists(this.root)) return;
    const ioctlOnly = this.fs.exists('/dev/sev-guest');
    throw failed(
      ioctlOnly
        ? `configfs-tsm is not available at ${this.root}; /dev/sev-guest exists but needs an ioctl, which Node.js cannot issue. Use a kernel with CONFIG_TSM_REPORTS (Linux 6.7 or later) and mount configfs (mount -t configfs none /sys/kernel/config)`
        : `no SEV-SNP guest interface: ${this.root} (configfs-tsm) does not exist and there is no /dev/sev-guest - is this an SEV-SNP guest with the sev-guest driver loaded?`,
      { path: this.root, devSevGuest: ioctlOnly },
    );
  }

  private async request(entry: string, reportData: Uint8Array, vmpl: number): Promise<ExtendedReport> {
    const file = (name: string) => join(entry, name);
    const read = async (name: string) => {
      try {
        return await this.fs.readFile(file(name));
      } catch (err) {
        throw failed(`reading ${file(name)}: ${(err as Error).message}`, { path: file(name) });
      }
    };
    const provider = (await read('provider')).toString('utf8').trim();
    if (provider !== 'sev_guest') throw failed(`configfs-tsm provider is ${JSON.stringify(provider)}, expected "sev_guest"`, { provider });
    try {
      if (this.fs.exists(file('privlevel'))) await this.fs.writeFile(file('privlevel'), Buffer.from(`${vmpl}\n`));
      await this.fs.writeFile(file('inblob'), reportData);
    } catch (err) {
      throw failed(`writing the report request to ${entry}: ${(err as Error).message}`, { path: entry });
    }
    const before = (await read('generation')).toString('utf8').trim();
    const report = await read('outblob');
    const certTable = this.fs.exists(file('auxblob')) ? await read('auxblob') : Buffer.alloc(0);
    const after = (await read('generation')).toString('utf8').trim();
    if (before !== after) throw failed(`configfs-tsm entry ${entry} was written by someone else meanwhile (generation ${before} -> ${after})`, { path: entry });
    if (report.length < REPORT_SIZE) throw failed(`outblob has ${report.length} bytes, an SNP report has ${REPORT_SIZE}`, { size: report.length });
    return { report: Buffer.from(report.subarray(0, REPORT_SIZE)), certTable };
  }
}
