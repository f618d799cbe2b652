/**
 * The scripts the VM scenario's pod runs (./vm-checks.ts), run here by Node against files: the
 * writer's 16 MiB marker file, placed in a stand-in for /dev/mapper/state at a 4 KiB-aligned
 * offset that is no multiple of 1 MiB, is found by the one-read-per-MiB scan; a device without
 * it is reported absent.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { scanScript, writeScript } from './vm-checks.js';

describe('VM scenario marker scripts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'asterism-vm-marker-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const marker = 'asterism-vm-marker-0123456789abcdef01234567';
  const node = (script: string) => execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });

  it('the writer writes 16 MiB of the marker; the scan finds it in a device where the file starts off a MiB boundary', () => {
    assert.match(node(writeScript(marker, dir)), /written/);
    const file = readFileSync(join(dir, 'marker'));
    assert.equal(file.length, 16 * 2 ** 20);
    const device = join(dir, 'device');
    const fd = openSync(device, 'w');
    const at = 5 * 2 ** 20 + 3 * 4096;
    writeSync(fd, file, 0, file.length, at);
    writeSync(fd, Buffer.alloc(4096), 0, 4096, 40 * 2 ** 20);
    closeSync(fd);
    const found = /found at (\d+)/.exec(node(scanScript(marker, device)));
    assert.ok(found, 'found');
    assert.ok(Number(found[1]) >= at && Number(found[1]) < at + file.length, `inside the file's range: ${found[1]}`);
  });

  it('reports absent when the device holds no copy', () => {
    const device = join(dir, 'empty');
    const fd = openSync(device, 'w');
    writeSync(fd, Buffer.alloc(4096), 0, 4096, 8 * 2 ** 20);
    closeSync(fd);
    assert.match(node(scanScript(marker, device)), /^absent from 10 samples, 0 unreadable/);
  });
});
