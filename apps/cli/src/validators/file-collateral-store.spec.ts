import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FileCollateralStore } from './file-collateral-store.js';

describe('FileCollateralStore (--collateral-dir)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'asterism-collateral-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps records across instances, one file per key (keys with "/" stay in the cache folder)', async () => {
    const a = new FileCollateralStore(dir);
    await a.put('tdx-pcs', { key: 'tcb/50806f000000', payload: Buffer.from('tcb info'), fetchedAt: 1 });
    await a.put('tdx-pcs', { key: 'root-crl', payload: Buffer.from([0, 1, 2]), fetchedAt: 2 });
    await a.put('tdx-pcs', { key: 'root-crl', payload: Buffer.from([3]), fetchedAt: 3 });
    const records = await new FileCollateralStore(dir).list('tdx-pcs');
    assert.deepEqual(
      records.map((r) => [r.key, Buffer.from(r.payload).toString('hex'), r.fetchedAt]).sort(),
      [
        ['root-crl', '03', 3],
        ['tcb/50806f000000', Buffer.from('tcb info').toString('hex'), 1],
      ],
    );
    assert.deepEqual(readdirSync(join(dir, 'tdx-pcs')).sort(), ['root-crl.json', 'tcb%2F50806f000000.json']);
    assert.deepEqual(await a.list('other-cache'), []);
  });

  it('skips a file that does not parse or names another key (the cache then treats the key as missing)', async () => {
    writeFileSync(join(dir, 'tdx-pcs', 'qe-identity.json'), '{not json');
    writeFileSync(join(dir, 'tdx-pcs', 'pck-crl%2Fplatform.json'), JSON.stringify({ key: 'root-crl', fetchedAt: 1, payload: 'AA==' }));
    assert.deepEqual((await new FileCollateralStore(dir).list('tdx-pcs')).map((r) => r.key).sort(), ['root-crl', 'tcb/50806f000000']);
  });

  it('refuses a cache name that is not a plain folder name', async () => {
    await assert.rejects(new FileCollateralStore(dir).list('../x'), /not a folder name/);
  });
});
