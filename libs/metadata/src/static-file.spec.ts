import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { StaticFileMetadata } from './static-file.js';
import { MetadataError, parseRole } from './types.js';

const dir = mkdtempSync(join(tmpdir(), 'metadata-'));
const file = join(dir, 'cluster.json');

describe('StaticFileMetadata', () => {
  it('serves self, list, LB and hash from one file, changes visible on the next call', async () => {
    writeFileSync(file, JSON.stringify({ instances: [{ Name: 'node-0', Role: 'ControlPlane', VPCIP: '127.0.0.1' }], loadBalancer: { host: '127.0.0.1', port: '16443' }, initSecretHash: '$2a$10$x' }));
    const m = new StaticFileMetadata(file, 'node-0');
    assert.equal((await m.self()).Role, 'ControlPlane');
    assert.deepEqual(await m.getLoadBalancerEndpoint(), { host: '127.0.0.1', port: '16443' });
    assert.equal(await m.initSecretHash(), '$2a$10$x');
    writeFileSync(file, JSON.stringify({ instances: [{ Name: 'node-0', Role: 'ControlPlane' }, { Name: 'node-1', Role: 'worker' }], loadBalancer: { host: 'h' } }));
    assert.equal((await m.list()).length, 2);
    assert.equal((await new StaticFileMetadata(file, 'node-1').self()).Role, 'Worker');
  });

  it('parses the file again only when its inode, size or time changed, and never caches a file written in the last second', async () => {
    const f = join(dir, 'cache.json');
    const doc = (name: string) => JSON.stringify({ instances: [{ Name: name, Role: 'Worker', VPCIP: '10.0.0.1' }] });
    const names = async (m: StaticFileMetadata) => (await m.list()).map((i) => i.Name);
    const m = new StaticFileMetadata(f, 'x');
    const settled = new Date(Date.now() - 60_000);

    writeFileSync(f, doc('aaaa'));
    assert.deepEqual(await names(m), ['aaaa']);
    writeFileSync(f, doc('bbbb'));
    assert.deepEqual(await names(m), ['bbbb'], 'a file written just now is read again on the next call');

    utimesSync(f, settled, settled);
    assert.deepEqual(await names(m), ['bbbb']);
    writeFileSync(f, doc('cccc'));
    utimesSync(f, settled, settled);
    assert.deepEqual(await names(m), ['bbbb'], 'same inode, size and time: the parsed file is reused (not read)');
    utimesSync(f, new Date(), new Date());
    assert.deepEqual(await names(m), ['cccc'], 'a new modification time: read again');

    writeFileSync(`${f}.tmp`, doc('dddd'));
    utimesSync(`${f}.tmp`, settled, settled);
    renameSync(`${f}.tmp`, f);
    assert.deepEqual(await names(m), ['dddd'], 'replaced by rename (new inode, as the local cluster writes it): read again');
  });

  const cases: Array<[string, () => Promise<unknown>, string]> = [
    ['unknown self', () => new StaticFileMetadata(file, 'nope').self(), 'METADATA_NOT_FOUND'],
    ['missing file', () => new StaticFileMetadata(join(dir, 'missing.json'), 'x').list(), 'METADATA_UNAVAILABLE'],
    ['no init secret hash', () => new StaticFileMetadata(file, 'node-0').initSecretHash(), 'METADATA_NOT_FOUND'],
  ];
  for (const [name, run, code] of cases) {
    it(`fails with ${code} for ${name}`, async () => {
      await assert.rejects(run(), (e: unknown) => e instanceof MetadataError && e.code === code);
    });
  }

  it('rejects a file that is not a JSON object', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '[1,2]');
    await assert.rejects(new StaticFileMetadata(bad, 'x').list(), (e: unknown) => e instanceof MetadataError && e.code === 'METADATA_MALFORMED');
  });
});

describe('parseRole', () => {
  for (const [input, role] of [
    ['ControlPlane', 'ControlPlane'],
    ['control-plane', 'ControlPlane'],
    ['CONTROLPLANE', 'ControlPlane'],
    ['Worker', 'Worker'],
    ['other', 'Unknown'],
    [5, 'Unknown'],
  ] as const) {
    it(`${String(input)} -> ${role}`, () => assert.equal(parseRole(input), role));
  }
});
