/**
 * TDX quotes through Linux configfs-tsm (`/sys/kernel/config/tsm/report`), which needs no ioctl:
 * create a report entry (a directory), write the 64-byte report data to `inblob`, read the quote
 * from `outblob`, check `generation` (the number of writes to the entry: another writer in
 * between would have changed what `outblob` answers), remove the entry.
 */
import { randomBytes } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import type { TdxQuoteProvider } from './qemu-tdx.js';

/** The file operations used (node:fs/promises by default; tests may observe them). */
export interface TsmFs {
  mkdir(path: string): Promise<unknown>;
  writeFile(path: string, data: Buffer): Promise<void>;
  readFile(path: string): Promise<Buffer>;
  rmdir(path: string): Promise<void>;
}

const nodeFs: TsmFs = {
  mkdir: (p) => fsp.mkdir(p),
  writeFile: (p, d) => fsp.writeFile(p, d),
  readFile: (p) => fsp.readFile(p),
  rmdir: (p) => fsp.rmdir(p),
};

/** Default configfs-tsm report directory. */
export const CONFIGFS_TSM_REPORT_DIR = '/sys/kernel/config/tsm/report';

/** Quote provider over configfs-tsm. */
export class ConfigfsTsmQuoteProvider implements TdxQuoteProvider {
  constructor(
    private readonly root = CONFIGFS_TSM_REPORT_DIR,
    private readonly fs: TsmFs = nodeFs,
  ) {}

  async getQuote(reportData: Buffer, signal?: AbortSignal): Promise<Buffer> {
    if (reportData.length > 64) throw new Error(`report data is ${reportData.length} bytes, at most 64`);
    const entry = join(this.root, `asterism-${process.pid}-${randomBytes(6).toString('hex')}`);
    await this.fs.mkdir(entry);
    try {
      signal?.throwIfAborted();
      await this.fs.writeFile(join(entry, 'inblob'), Buffer.concat([reportData, Buffer.alloc(64 - reportData.length)]));
      const quote = await this.fs.readFile(join(entry, 'outblob'));
      const generation = (await this.fs.readFile(join(entry, 'generation'))).toString('utf8').trim();
      if (generation !== '1') throw new Error(`configfs-tsm entry ${entry} was written ${generation} times; the quote may not be ours`);
      if (quote.length === 0) throw new Error('configfs-tsm returned an empty quote');
      return quote;
    } finally {
      await this.fs.rmdir(entry).catch(() => undefined);
    }
  }
}
