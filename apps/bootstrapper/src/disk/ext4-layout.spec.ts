/** The blocks written before mke2fs on a no-wipe integrity device (docs/adr/0041-state-disk-mapper.md addendum). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { edgeRanges, ext4PrezeroRanges, Ext4LayoutError, parseMke2fsDryRun } from './ext4-layout.js';

const ONE_GIB = 'Creating filesystem with 262144 4k blocks and 65536 inodes\nFilesystem UUID: 0b0c0d0e-0000-4000-8000-000000000000\nSuperblock backups stored on blocks: \n\t32768, 98304, 163840, 229376\n\nAllocating group tables: done\n';

describe('ext4 layout of the state disk', () => {
  it('parses the dry run: block size, count and the superblock backups', () => {
    assert.deepEqual(parseMke2fsDryRun(ONE_GIB), { blockSize: 4096, blocks: 262144, backups: [32768, 98304, 163840, 229376] });
    // A file system of one group has no backups.
    assert.deepEqual(parseMke2fsDryRun('Creating filesystem with 16384 4k blocks and 16384 inodes\n').backups, []);
  });

  it('refuses output without the layout, and backups beyond the end', () => {
    assert.throws(() => parseMke2fsDryRun('mke2fs: Device size reported to be zero.'), (e: unknown) => e instanceof Ext4LayoutError && e.code === 'EXT4_LAYOUT_UNKNOWN');
    assert.throws(() => parseMke2fsDryRun('Creating filesystem with 1000 4k blocks and 16 inodes\nSuperblock backups stored on blocks: \n\t32768\n'), Ext4LayoutError);
  });

  it('zeroes the head of group 0 and of each backup group (superblock, descriptors, 1024 reserved descriptor blocks) and the last MiB', () => {
    const ranges = ext4PrezeroRanges(parseMke2fsDryRun(ONE_GIB));
    // 8 groups: 1 descriptor block; head = 1 + 1 + 1024 blocks.
    assert.deepEqual(ranges, [
      { start: 0, count: 1026 },
      { start: 32768, count: 1026 },
      { start: 98304, count: 1026 },
      { start: 163840, count: 1026 },
      { start: 229376, count: 1026 },
      { start: 261888, count: 256 },
    ]);
    const mib = ranges.reduce((s, r) => s + r.count, 0) * 4096 / 2 ** 20;
    assert.ok(mib < 22, `about 2 % of a 1 GiB disk is written (${mib} MiB), not all of it`);
  });

  it('merges overlapping ranges and stays inside a small file system', () => {
    const ranges = ext4PrezeroRanges({ blockSize: 4096, blocks: 1200, backups: [] });
    assert.deepEqual(ranges, [{ start: 0, count: 1200 }]);
    assert.deepEqual(edgeRanges(8 * 2 ** 20, 4096), [
      { start: 0, count: 256 },
      { start: 1792, count: 256 },
    ]);
    assert.deepEqual(edgeRanges(2 ** 20 + 4096 * 3, 4096), [{ start: 0, count: 259 }]);
  });
});
