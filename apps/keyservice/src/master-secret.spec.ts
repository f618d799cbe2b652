import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadMasterSecret, MasterSecretError } from './master-secret.js';

const dir = mkdtempSync(join(tmpdir(), 'keyservice-secret-'));
const file = (name: string, bytes: number) => {
  const p = join(dir, name);
  writeFileSync(p, Buffer.alloc(bytes, 7));
  return p;
};

describe('loadMasterSecret', () => {
  it('reads raw bytes of both files', async () => {
    const m = await loadMasterSecret(file('m16', 16), file('s32', 32));
    assert.equal(m.key.length, 16);
    assert.equal(m.salt.length, 32);
  });

  const cases: Array<[string, () => Promise<unknown>, string]> = [
    ['missing secret file', () => loadMasterSecret(join(dir, 'nope'), file('s', 32)), 'SECRET_FILE_UNREADABLE'],
    ['missing salt file', () => loadMasterSecret(file('m', 32), join(dir, 'nope')), 'SECRET_FILE_UNREADABLE'],
    ['15-byte secret', () => loadMasterSecret(file('m15', 15), file('s', 32)), 'SECRET_TOO_SHORT'],
    ['31-byte salt', () => loadMasterSecret(file('m', 32), file('s31', 31)), 'SALT_TOO_SHORT'],
  ];
  for (const [name, run, code] of cases) {
    it(`fails with ${code} for ${name}`, async () => {
      await assert.rejects(run(), (e: unknown) => e instanceof MasterSecretError && e.code === code);
    });
  }
});
