import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ReloadingFile } from './reloading-file.js';

describe('ReloadingFile', () => {
  it('parses once, re-reads only after the file changed, and does not cache read errors', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reloading-file-'));
    const path = join(dir, 'value');
    let clock = 0;
    let parses = 0;
    const file = new ReloadingFile(path, (t) => (parses++, t.trim()), 100, () => clock);
    writeFileSync(path, 'one');
    // [name, action before get, expected value or error, expected parses so far]
    const steps: Array<[string, () => void, string | RegExp, number]> = [
      ['first read parses', () => undefined, 'one', 1],
      ['unchanged file within the recheck interval: no stat, no parse', () => (clock = 50), 'one', 1],
      ['unchanged file after the interval: stat only', () => (clock = 200), 'one', 1],
      ['changed content within the interval is not seen yet', () => (writeFileSync(path, 'two, longer'), (clock = 250)), 'one', 1],
      ['changed content after the interval is re-read', () => (clock = 400), 'two, longer', 2],
      [
        'a ConfigMap-style symlink swap is seen',
        () => {
          writeFileSync(join(dir, 'v3'), 'three');
          symlinkSync(join(dir, 'v3'), join(dir, 'tmp-link'));
          renameSync(join(dir, 'tmp-link'), path);
          clock = 600;
        },
        'three',
        3,
      ],
      ['a missing file fails', () => (renameSync(path, join(dir, 'gone')), (clock = 800)), /ENOENT/, 3],
      ['and is tried again on the next call', () => renameSync(join(dir, 'gone'), path), 'three', 3],
    ];
    for (const [name, act, expected, wantParses] of steps) {
      act();
      if (expected instanceof RegExp) await assert.rejects(file.get(), expected, name);
      else assert.equal(await file.get(), expected, name);
      assert.equal(parses, wantParses, name);
    }
  });
});
