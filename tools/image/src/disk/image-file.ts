/**
 * A node image file: its GPT and the unified kernel image on its EFI system partition
 * (`\EFI\BOOT\BOOTX64.EFI`, read with mtools' mcopy at the partition's offset).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ImageError } from '../errors.js';
import { ESP_TYPE, parseGpt, SECTOR, type Gpt } from './gpt.js';

const run = promisify(execFile);

/** The path of the boot binary on the ESP (removable-media default path of x86-64 firmware). */
export const ESP_BOOT_PATH = '::/EFI/BOOT/BOOTX64.EFI';

/** What prediction needs from an image file. */
export interface ImageContents {
  readonly gpt: Gpt;
  readonly uki: Buffer;
}

async function readGpt(path: string): Promise<Gpt> {
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    // parseGpt reads synchronously: load the first 1 MiB, which holds LBA 1 and the entries.
    const head = Buffer.alloc(Math.min(size, 1 << 20));
    await fh.read(head, 0, head.length, 0);
    return parseGpt((offset, length) => {
      if (offset + length > head.length) throw new ImageError('GPT_INVALID', `invalid GPT: table beyond the first MiB (offset ${offset})`);
      return head.subarray(offset, offset + length);
    });
  } finally {
    await fh.close();
  }
}

/** Reads the GPT and the UKI of `path`; ImageError when either is missing. */
export async function readImage(path: string): Promise<ImageContents> {
  const gpt = await readGpt(path);
  const esp = gpt.partitions.find((p) => p.type === ESP_TYPE);
  if (!esp) throw new ImageError('IMAGE_INVALID', `${path} has no EFI system partition`);
  const dir = await mkdtemp(join(tmpdir(), 'asterism-image-'));
  try {
    const out = join(dir, 'BOOTX64.EFI');
    try {
      await run('mcopy', ['-n', '-i', `${path}@@${esp.firstLba * BigInt(SECTOR)}`, ESP_BOOT_PATH, out], { env: { ...process.env, MTOOLS_SKIP_CHECK: '1' } });
    } catch (err) {
      throw new ImageError('ESP_READ_FAILED', `reading ${ESP_BOOT_PATH} from the ESP of ${path}: ${(err as { stderr?: string }).stderr?.trim() || (err as Error).message}`, { cause: err });
    }
    return { gpt, uki: await readFile(out) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
