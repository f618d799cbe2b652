import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createNopLogger } from '@asterism/logger';
import { ComponentInstaller } from './component-installer.js';
import { ComponentInstallError } from './component-spec.js';

const sha = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** A loopback artifact server: real HTTP, with a flaky path (503 twice) and a stalled one. */
describe('ComponentInstaller over HTTP (loopback server)', () => {
  let dir: string;
  let server: Server;
  let base: string;
  const kubelet = Buffer.from('#!/bin/sh\necho kubelet\n');
  let crictl: Buffer;
  let flakyHits = 0;
  let requests: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'components-int-'));
    execFileSync('sh', ['-c', `printf '#!/bin/sh\\necho crictl\\n' > ${dir}/crictl && chmod 755 ${dir}/crictl && tar --sort=name --mtime=@0 --owner=0 --group=0 -C ${dir} -czf ${dir}/crictl.tar.gz crictl`]);
    crictl = await readFile(join(dir, 'crictl.tar.gz'));
    server = createServer((req, res) => {
      requests.push(req.url ?? '');
      if (req.url === '/v1/kubelet') return void res.end(kubelet);
      if (req.url === '/v1/crictl.tar.gz') return void res.end(crictl);
      if (req.url === '/v1/tampered/kubelet') return void res.end(Buffer.concat([kubelet.subarray(0, -1), Buffer.from('X')]));
      if (req.url === '/v1/flaky/kubelet') return void (++flakyHits <= 2 ? res.writeHead(503).end() : res.end(kubelet));
      if (req.url === '/v1/stall/kubelet') return void res.writeHead(200).write('partial');
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  const installer = (root: string, limits = {}) => new ComponentInstaller({ logger: createNopLogger(), resolve: (p) => join(root, p), limits: { retryDelayMs: 10, ...limits } });
  const kubeletAt = (path: string) => ({ url: `${base}/v1/${path}`, hash: sha(kubelet), installPath: '/run/state/bin/kubelet', extract: false });
  const crictlComponent = () => ({ url: `${base}/v1/crictl.tar.gz`, hash: sha(crictl), installPath: '/run/state/bin', extract: true });

  it('installs from http and runs the installed binaries', async () => {
    const root = await mkdtemp(join(dir, 'root-'));
    await installer(root).install([kubeletAt('kubelet'), crictlComponent()]);
    assert.equal(execFileSync(join(root, 'run/state/bin/kubelet')).toString(), 'kubelet\n');
    assert.equal(execFileSync(join(root, 'run/state/bin/crictl')).toString(), 'crictl\n');
  });

  it('skips already-installed components without a request', async () => {
    const root = await mkdtemp(join(dir, 'root-'));
    await installer(root).install([kubeletAt('kubelet'), crictlComponent()]);
    requests = [];
    assert.deepEqual((await installer(root).install([kubeletAt('kubelet'), crictlComponent()])).skipped, ['kubelet', 'crictl']);
    assert.deepEqual(requests, []);
  });

  it('refuses a tampered download and installs nothing', async () => {
    const root = await mkdtemp(join(dir, 'root-'));
    await assert.rejects(installer(root).install([crictlComponent(), kubeletAt('tampered/kubelet')]), (e: unknown) => {
      assert.ok(e instanceof ComponentInstallError && e.code === 'HASH_MISMATCH');
      assert.match(e.message, new RegExp(`component kubelet: .* has hash sha256:[0-9a-f]{64}, expected ${sha(kubelet)}`));
      return true;
    });
    assert.equal(existsSync(join(root, 'run/state/bin')), false);
  });

  it('retries server errors', async () => {
    const root = await mkdtemp(join(dir, 'root-'));
    flakyHits = 0;
    await installer(root, { attempts: 3 }).install([kubeletAt('flaky/kubelet')]);
    assert.equal(flakyHits, 3);
  });

  it('gives up on a stalled server after the attempt timeout', async () => {
    const root = await mkdtemp(join(dir, 'root-'));
    await assert.rejects(
      installer(root, { attempts: 2, attemptTimeoutMs: 300 }).install([kubeletAt('stall/kubelet')]),
      (e: unknown) => e instanceof ComponentInstallError && e.code === 'ARTIFACT_UNREACHABLE',
    );
    assert.equal(existsSync(join(root, 'run/state/bin/kubelet')), false);
  });

  it('names a 404 as unreachable with the URL', async () => {
    const root = await mkdtemp(join(dir, 'root-'));
    await assert.rejects(installer(root, { attempts: 1 }).install([kubeletAt('nope/kubelet')]), /component kubelet: fetching http:\/\/127\.0\.0\.1:\d+\/v1\/nope\/kubelet failed after 1 attempts: HTTP 404/);
  });
});
