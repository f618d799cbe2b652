/**
 * GUID partition table of a node image (docs/protocol/node-image.md "Partitions"): the partitions
 * by type, and the UEFI_GPT_DATA the firmware measures into PCR 5 when it boots from the disk.
 */
import { ImageError } from '../errors.js';

/** Logical block size of the image. */
export const SECTOR = 512;

/** EFI system partition type. */
export const ESP_TYPE = 'c12a7328-f81f-11d2-ba4b-00a0c93ec93b';

/** One used partition entry. */
export interface GptPartition {
  /** 1-based partition number. */
  readonly number: number;
  readonly type: string;
  readonly uuid: string;
  readonly name: string;
  readonly firstLba: bigint;
  readonly lastLba: bigint;
}

/** A disk's primary GPT. */
export interface Gpt {
  /** The header as on disk (HeaderSize bytes). */
  readonly header: Buffer;
  /** The raw entries of the used partitions, in table order. */
  readonly usedEntries: readonly Buffer[];
  readonly partitions: readonly GptPartition[];
}

/** Mixed-endian GUID bytes (as in GPT) to the usual lower-case text form. */
export function guidText(b: Buffer): string {
  const hex = (x: Buffer): string => x.toString('hex');
  const le = (x: Buffer): string => hex(Buffer.from(x).reverse());
  return `${le(b.subarray(0, 4))}-${le(b.subarray(4, 6))}-${le(b.subarray(6, 8))}-${hex(b.subarray(8, 10))}-${hex(b.subarray(10, 16))}`;
}

function fail(message: string): never {
  throw new ImageError('GPT_INVALID', `invalid GPT: ${message}`);
}

/** Parses the primary GPT of a disk image given its first sectors (`read(offset, length)`). */
export function parseGpt(read: (offset: number, length: number) => Buffer): Gpt {
  const lba1 = read(SECTOR, SECTOR);
  if (lba1.subarray(0, 8).toString('latin1') !== 'EFI PART') fail('no "EFI PART" signature at LBA 1');
  const headerSize = lba1.readUInt32LE(12);
  if (headerSize < 92 || headerSize > SECTOR) fail(`header size ${headerSize}`);
  const entriesLba = Number(lba1.readBigUInt64LE(72));
  const count = lba1.readUInt32LE(80);
  const entrySize = lba1.readUInt32LE(84);
  if (entrySize < 128 || count > 1024) fail(`entry size ${entrySize}, count ${count}`);
  const table = read(entriesLba * SECTOR, count * entrySize);
  const usedEntries: Buffer[] = [];
  const partitions: GptPartition[] = [];
  for (let i = 0; i < count; i++) {
    const e = table.subarray(i * entrySize, (i + 1) * entrySize);
    if (e.subarray(0, 16).every((x) => x === 0)) continue;
    usedEntries.push(Buffer.from(e));
    partitions.push({
      number: i + 1,
      type: guidText(e.subarray(0, 16)),
      uuid: guidText(e.subarray(16, 32)),
      firstLba: e.readBigUInt64LE(32),
      lastLba: e.readBigUInt64LE(40),
      name: e.subarray(56, 128).toString('utf16le').replace(/\0.*$/s, ''),
    });
  }
  return { header: Buffer.from(lba1.subarray(0, headerSize)), usedEntries, partitions };
}

/** UEFI_GPT_DATA: the header, the number of used entries (UINT64) and those entries. */
export function uefiGptData(gpt: Gpt): Buffer {
  const n = Buffer.alloc(8);
  n.writeBigUInt64LE(BigInt(gpt.usedEntries.length));
  return Buffer.concat([gpt.header, n, ...gpt.usedEntries]);
}
