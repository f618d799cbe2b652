import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { artifactServer } from './artifact-server.js';

describe('artifact server (loopback)', () => {
  let dir: string;
  let base: string;
  const server = { close: () => undefined as unknown } as { close: () => unknown };
  before(async () => {
    // A root below a dot folder, like ~/.cache.
    dir = join(await mkdtemp(join(tmpdir(), 'artifacts-')), '.cache');
    await mkdir(join(dir, 'root', 'v1.35.4'), { recursive: true });
    await writeFile(join(dir, 'root', 'v1.35.4', 'kubelet'), 'kubelet-bytes');
    await writeFile(join(dir, 'secret'), 'outside');
    await writeFile(join(dir, 'root', 'v1.35.4', '.hidden'), 'x');
    const s = artifactServer(join(dir, 'root'));
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    server.close = () => new Promise((r) => s.close(r));
  });
  after(async () => {
    await server.close();
    await rm(join(dir, '..'), { recursive: true, force: true });
  });

  it('serves a packed artifact', async () => {
    const res = await fetch(`${base}/v1.35.4/kubelet`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'kubelet-bytes');
  });
  it('refuses paths outside the root, folders, missing files and writes', async () => {
    for (const p of ['/../secret', '/%2e%2e/secret', '/v1.35.4', '/v1.35.4/nope', '/v1.35.4/.hidden']) assert.equal((await fetch(`${base}${p}`)).status, 404, p);
    assert.equal((await fetch(`${base}/v1.35.4/kubelet`, { method: 'PUT', body: 'x' })).status, 405);
  });
});
