/**
 * Where an ext4 file system keeps the blocks mke2fs reads before it has written them
 * (docs/adr/0041-state-disk-mapper.md, addendum "Formatting without the full wipe").
 *
 * The state disk is formatted without dm-integrity's wipe, so a sector reads back only after it
 * was written once. mke2fs writes most of its metadata in whole blocks (bitmaps, inode tables with
 * `lazy_itable_init=0`, the journal with `lazy_journal_init=0`), which needs no read. What it
 * writes in parts of a block (the 1 KiB superblock and its backups, group descriptors, the resize
 * inode's reserved descriptor blocks) goes through a read of the whole block; those blocks, and
 * the start and end of the device that blkid probes, are written with zeros first.
 */
import { AsterismError } from '@asterism/errors';

/** The mke2fs dry run's output did not say what the layout needs. */
export class Ext4LayoutError extends AsterismError<'EXT4_LAYOUT_UNKNOWN'> {}

/** A run of file-system blocks. */
export interface BlockRange {
  start: number;
  count: number;
}

/** The facts of a dry run (`mke2fs -n`) the zeroing needs. */
export interface Ext4Layout {
  blockSize: number;
  blocks: number;
  /** First blocks of the superblock backups (sparse_super: groups 1 and powers of 3, 5 and 7). */
  backups: number[];
}

/** Blocks per group of a 4 KiB-block ext4 (one block bitmap: 8 bits per byte). */
const groupBlocks = (blockSize: number): number => blockSize * 8;
/** Group descriptors of 64-bit ext4 are 64 bytes. */
const DESCRIPTOR_BYTES = 64;
/** The resize inode reserves at most one block of addresses' worth of descriptor blocks. */
const maxReservedGdtBlocks = (blockSize: number): number => blockSize / 4;
/** What blkid reads at either end of a device (and MD/LVM signatures live in): 1 MiB. */
const EDGE_BYTES = 1 << 20;

/** Parses `mke2fs -n` output ("Creating filesystem with N 4k blocks ...", "Superblock backups stored on blocks: ..."). */
export function parseMke2fsDryRun(output: string): Ext4Layout {
  const size = /Creating filesystem with (\d+) (\d+)k blocks/.exec(output);
  if (!size) throw new Ext4LayoutError('EXT4_LAYOUT_UNKNOWN', 'mke2fs -n did not print the block count and size');
  const blocks = Number(size[1]);
  const blockSize = Number(size[2]) * 1024;
  const list = /Superblock backups stored on blocks:\s*([\d,\s]+)/.exec(output);
  const backups = list ? list[1]!.split(',').map((s) => Number(s.trim())).filter((n) => Number.isInteger(n) && n > 0) : [];
  if (backups.some((b) => b >= blocks)) throw new Ext4LayoutError('EXT4_LAYOUT_UNKNOWN', 'mke2fs -n listed a superblock backup beyond the file system');
  return { blockSize, blocks, backups };
}

/**
 * The block ranges to write with zeros before mke2fs runs: the head of group 0 and of every
 * backup group (superblock, descriptors, reserved descriptors) and the device's last MiB; sorted,
 * merged, inside the file system.
 */
export function ext4PrezeroRanges(layout: Ext4Layout): BlockRange[] {
  const { blockSize, blocks } = layout;
  const groups = Math.ceil(blocks / groupBlocks(blockSize));
  const head = 1 + Math.ceil((groups * DESCRIPTOR_BYTES) / blockSize) + maxReservedGdtBlocks(blockSize);
  const edge = Math.ceil(EDGE_BYTES / blockSize);
  const ranges = [0, ...layout.backups].map((start) => ({ start, count: head }));
  ranges.push({ start: Math.max(0, blocks - edge), count: edge });
  return merge(ranges.map((r) => ({ start: r.start, count: Math.min(r.count, blocks - r.start) })));
}

/** Edge ranges known before the layout (so the dry run's own probe reads written blocks). */
export function edgeRanges(deviceBytes: number, blockSize: number): BlockRange[] {
  const blocks = Math.floor(deviceBytes / blockSize);
  const edge = Math.min(blocks, Math.ceil(EDGE_BYTES / blockSize));
  return merge([
    { start: 0, count: edge },
    { start: blocks - edge, count: edge },
  ]);
}

function merge(ranges: BlockRange[]): BlockRange[] {
  const sorted = [...ranges].filter((r) => r.count > 0).sort((a, b) => a.start - b.start);
  const out: BlockRange[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.start <= last.start + last.count) last.count = Math.max(last.count, r.start + r.count - last.start);
    else out.push({ ...r });
  }
  return out;
}
