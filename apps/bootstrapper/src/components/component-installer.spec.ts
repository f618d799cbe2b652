import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createNopLogger } from '@asterism/logger';
import { ComponentInstaller } from './component-installer.js';
import { ComponentInstallError, parseComponents } from './component-spec.js';

const sha = (b: Buffer | string) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

describe('ComponentInstaller (real files, real tar)', () => {
  let dir: string;
  let artifacts: string;
  let kubelet: Buffer;
  let archive: Buffer;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'components-spec-'));
    artifacts = join(dir, 'artifacts');
    await mkdir(join(artifacts, 'cni'), { recursive: true });
    kubelet = Buffer.from('#!/bin/sh\necho kubelet v1.35.4\n');
    await writeFile(join(artifacts, 'kubelet'), kubelet);
    await writeFile(join(artifacts, 'cni', 'bridge'), '#!/bin/sh\necho bridge\n', { mode: 0o755 });
    await writeFile(join(artifacts, 'cni', 'loopback'), '#!/bin/sh\necho loopback\n', { mode: 0o755 });
    execFileSync('tar', ['-czf', join(artifacts, 'cni-plugins.tar.gz'), '-C', join(artifacts, 'cni'), 'bridge', 'loopback']);
    archive = await readFile(join(artifacts, 'cni-plugins.tar.gz'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const url = (name: string) => pathToFileURL(join(artifacts, name)).toString();
  const fresh = async () => {
    const root = await mkdtemp(join(dir, 'root-'));
    return { root, installer: new ComponentInstaller({ logger: createNopLogger(), resolve: (p) => join(root, p), stagingParent: dir }) };
  };
  const list = () => [
    { url: url('kubelet'), hash: sha(kubelet), installPath: '/run/state/bin/kubelet', extract: false },
    { url: url('cni-plugins.tar.gz'), hash: sha(archive), installPath: '/opt/cni/bin', extract: true },
  ];

  it('installs a binary (mode 0755) and an archive, then skips both on the next run', async () => {
    const { root, installer } = await fresh();
    assert.deepEqual(await installer.install(list()), { installed: ['kubelet', 'cni-plugins'], skipped: [] });
    const bin = join(root, 'run/state/bin/kubelet');
    assert.deepEqual(await readFile(bin), kubelet);
    assert.equal((await stat(bin)).mode & 0o777, 0o755);
    assert.equal(execFileSync(join(root, 'opt/cni/bin/bridge')).toString(), 'bridge\n');
    assert.deepEqual(await installer.install(list()), { installed: [], skipped: ['kubelet', 'cni-plugins'] });
  });

  it('reinstalls a binary whose bytes changed on disk, and an archive with a changed file', async () => {
    const { root, installer } = await fresh();
    await installer.install(list());
    await writeFile(join(root, 'run/state/bin/kubelet'), 'tampered');
    await writeFile(join(root, 'opt/cni/bin/loopback'), 'tampered');
    assert.deepEqual(await installer.install(list()), { installed: ['kubelet', 'cni-plugins'], skipped: [] });
    assert.deepEqual(await readFile(join(root, 'run/state/bin/kubelet')), kubelet);
  });

  it('refuses an artifact with one byte changed before anything is extracted or installed, naming both hashes', async () => {
    const { root, installer } = await fresh();
    const tampered = Buffer.from(archive);
    tampered[tampered.length - 1]! ^= 0x01;
    await writeFile(join(artifacts, 'cni-tampered.tar.gz'), tampered);
    const l = list();
    l[1] = { ...l[1]!, url: url('cni-tampered.tar.gz') };
    const err = await installer.install(l).then(
      () => assert.fail('expected a hash mismatch'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ComponentInstallError);
    assert.equal(err.code, 'HASH_MISMATCH');
    assert.match(err.message, /component cni-tampered/);
    assert.ok(err.message.includes(sha(archive)) && err.message.includes(sha(tampered)), err.message);
    assert.deepEqual(err.details.expected, sha(archive));
    assert.deepEqual(err.details.actual, sha(tampered));
    // The kubelet came first and was fine, but nothing is installed when any artifact is bad.
    assert.equal(existsSync(join(root, 'run/state/bin/kubelet')), false);
    assert.equal(existsSync(join(root, 'opt/cni/bin')), false);
    assert.deepEqual((await readdir(dir)).filter((n) => n.startsWith('asterism-components-')), [], 'staging removed');
  });

  it('reports an unreachable artifact as ARTIFACT_UNREACHABLE after its attempts', async () => {
    const { root } = await fresh();
    const installer = new ComponentInstaller({ logger: createNopLogger(), resolve: (p) => join(root, p), limits: { attempts: 2, retryDelayMs: 1 } });
    const l = [{ ...list()[0]!, url: url('missing') }];
    await assert.rejects(installer.install(l), (e: unknown) => e instanceof ComponentInstallError && e.code === 'ARTIFACT_UNREACHABLE' && /component missing.*2 attempts/.test(e.message));
  });

  it('refuses an artifact over the size limit', async () => {
    const { root } = await fresh();
    const installer = new ComponentInstaller({ logger: createNopLogger(), resolve: (p) => join(root, p), limits: { maxBytes: 10 } });
    await assert.rejects(installer.install([list()[0]!]), (e: unknown) => e instanceof ComponentInstallError && e.code === 'ARTIFACT_TOO_LARGE');
    assert.equal(existsSync(join(root, 'run/state/bin/kubelet')), false);
  });

  it('installs a data: URL (the reference carries kubeadm patches that way)', async () => {
    const { root, installer } = await fresh();
    const body = 'apiVersion: v1\n';
    await installer.install([{ url: `data:application/yaml;base64,${Buffer.from(body).toString('base64')}`, hash: sha(body), installPath: '/opt/kubernetes/patches/p.yaml', extract: false }]);
    assert.equal(await readFile(join(root, 'opt/kubernetes/patches/p.yaml'), 'utf8'), body);
  });
});

describe('parseComponents', () => {
  const ok = { url: 'http://10.42.0.1:8080/v1.35.4/kubelet', hash: `sha256:${'a'.repeat(64)}`, installPath: '/run/state/bin/kubelet', extract: false };
  const cases: [string, Partial<typeof ok>, RegExp][] = [
    ['not a URL', { url: 'kubelet' }, /is not a URL/],
    ['unsupported scheme', { url: 'ftp://h/kubelet' }, /scheme ftp: is not supported/],
    ['missing hash', { hash: '' }, /must be sha256/],
    ['short hash', { hash: 'sha256:abcd' }, /must be sha256/],
    ['other algorithm', { hash: `sha512:${'a'.repeat(64)}` }, /must be sha256/],
    ['relative path', { installPath: 'run/kubelet' }, /absolute, normalised/],
    ['dot-dot', { installPath: '/run/../etc/passwd' }, /absolute, normalised/],
    ['root', { installPath: '/' }, /absolute, normalised/],
  ];
  for (const [name, patch, re] of cases) {
    it(`refuses ${name}`, () => {
      assert.throws(() => parseComponents([ok, { ...ok, installPath: '/run/state/bin/kubeadm', ...patch }]), (e: unknown) => e instanceof ComponentInstallError && e.code === 'COMPONENT_INVALID' && re.test(e.message));
    });
  }
  it('refuses the same file twice', () => {
    assert.throws(() => parseComponents([ok, ok]), /named twice/);
  });
  it('names components after the URL file name', () => {
    assert.deepEqual(parseComponents([ok, { ...ok, url: 'https://h/x/cni-plugins.tar.gz', installPath: '/opt/cni/bin', extract: true }]).map((s) => s.name), ['kubelet', 'cni-plugins']);
  });
});
