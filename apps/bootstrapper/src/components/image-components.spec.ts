import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createNopLogger } from '@asterism/logger';
import { imageInstallPath } from '@asterism/versions';
import { ComponentInstaller } from './component-installer.js';
import { ComponentInstallError, parseComponents } from './component-spec.js';
import { digestReference } from './image-import.js';
import { parseImageList, type ImageStore } from './image-store.js';

const sha = (b: Buffer | string) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const REF = 'localhost/asterism/kube-proxy:v1.35.4';

/** Fake containerd for unit tests: import reads the archive's index.json like ctr names images. */
class FakeStore implements ImageStore {
  readonly images = new Map<string, string>();
  readonly calls: string[] = [];
  /** When set, an import resolves the reference to this digest instead of the archive's. */
  importAs: string | undefined;
  async digestOf(ref: string) {
    return this.images.get(ref);
  }
  async importArchive(file: string) {
    this.calls.push('import');
    const index = JSON.parse(execFileSync('tar', ['-xOf', file, 'index.json']).toString()) as { manifests: { digest: string; annotations: Record<string, string> }[] };
    for (const m of index.manifests) this.images.set(m.annotations['org.opencontainers.image.ref.name']!, this.importAs ?? m.digest);
  }
  async tag(ref: string, name: string) {
    this.calls.push(`tag ${name}`);
    this.images.set(name, this.images.get(ref)!);
  }
  async remove(ref: string) {
    this.calls.push(`rm ${ref}`);
    this.images.delete(ref);
  }
}

describe('ComponentInstaller: image components (fake containerd)', () => {
  let dir: string;
  let archive: Buffer;
  let manifestDigest: string;
  const kubelet = Buffer.from('#!/bin/sh\necho kubelet\n');

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'image-components-'));
    const layout = join(dir, 'layout');
    const manifest = Buffer.from('{"schemaVersion":2}');
    manifestDigest = sha(manifest);
    await mkdir(join(layout, 'blobs', 'sha256'), { recursive: true });
    await writeFile(join(layout, 'blobs', 'sha256', manifestDigest.slice(7)), manifest);
    await writeFile(join(layout, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
    await writeFile(join(layout, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: [{ digest: manifestDigest, annotations: { 'org.opencontainers.image.ref.name': REF } }] }));
    execFileSync('tar', ['--sort=name', '-cf', join(dir, 'kube-proxy.tar'), '-C', layout, 'oci-layout', 'index.json', 'blobs']);
    archive = await readFile(join(dir, 'kube-proxy.tar'));
    await writeFile(join(dir, 'kubelet'), kubelet);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const image = (digest = manifestDigest, hash = sha(archive)) => ({ url: pathToFileURL(join(dir, 'kube-proxy.tar')).toString(), hash, installPath: imageInstallPath({ ref: REF, digest }), extract: false });
  const kubeletComponent = () => ({ url: pathToFileURL(join(dir, 'kubelet')).toString(), hash: sha(kubelet), installPath: '/run/state/bin/kubelet', extract: false });
  const setup = async () => {
    const root = await mkdtemp(join(dir, 'root-'));
    const store = new FakeStore();
    return { root, store, installer: new ComponentInstaller({ logger: createNopLogger(), resolve: (p) => join(root, p), stagingParent: dir, images: store }) };
  };

  it('imports a checked archive, adds the digest reference, and skips it next time', async () => {
    const { store, installer } = await setup();
    const first = await installer.install([image(), kubeletComponent()]);
    assert.deepEqual(first, { installed: ['kubelet', 'kube-proxy'], skipped: [] });
    assert.equal(store.images.get(REF), manifestDigest);
    assert.equal(store.images.get(`localhost/asterism/kube-proxy@${manifestDigest}`), manifestDigest);
    const again = await installer.install([image(), kubeletComponent()]);
    assert.deepEqual(again, { installed: [], skipped: ['kube-proxy', 'kubelet'] });
    assert.deepEqual(store.calls, ['import', `tag localhost/asterism/kube-proxy@${manifestDigest}`]);
  });

  it('refuses an archive whose index names another digest before anything is installed or imported', async () => {
    const { root, store, installer } = await setup();
    const wrong = `sha256:${'e'.repeat(64)}`;
    await assert.rejects(installer.install([kubeletComponent(), image(wrong)]), (e: unknown) => {
      assert.ok(e instanceof ComponentInstallError && e.code === 'IMAGE_DIGEST_MISMATCH');
      assert.deepEqual(e.details, { component: 'kube-proxy', image: REF, expected: wrong, actual: manifestDigest });
      assert.match(e.message, new RegExp(`image ${REF} in its archive has digest ${manifestDigest}, expected ${wrong}`));
      return true;
    });
    assert.deepEqual(store.calls, []);
    await assert.rejects(readFile(join(root, 'run/state/bin/kubelet')), { code: 'ENOENT' });
  });

  it('a tampered archive is a hash mismatch: nothing imported', async () => {
    const { store, installer } = await setup();
    await assert.rejects(installer.install([image(manifestDigest, sha('other bytes'))]), (e: unknown) => e instanceof ComponentInstallError && e.code === 'HASH_MISMATCH' && e.details?.component === 'kube-proxy');
    assert.deepEqual(store.calls, []);
  });

  it('removes the name again when containerd resolves it to another digest after the import', async () => {
    const { store, installer } = await setup();
    store.importAs = `sha256:${'a'.repeat(64)}`;
    await assert.rejects(installer.install([image()]), (e: unknown) => e instanceof ComponentInstallError && e.code === 'IMAGE_DIGEST_MISMATCH' && e.details?.actual === store.importAs && /in containerd/.test(e.message));
    assert.equal(store.images.has(REF), false);
    assert.deepEqual(store.calls, ['import', `rm ${REF}`]);
  });

  it('re-imports when the reference resolves to another digest', async () => {
    const { store, installer } = await setup();
    store.images.set(REF, `sha256:${'b'.repeat(64)}`);
    assert.deepEqual((await installer.install([image()])).installed, ['kube-proxy']);
    assert.equal(store.images.get(REF), manifestDigest);
  });

  it('a list with images and no container runtime installs nothing', async () => {
    const root = await mkdtemp(join(dir, 'root-'));
    const installer = new ComponentInstaller({ logger: createNopLogger(), resolve: (p) => join(root, p) });
    await assert.rejects(installer.install([kubeletComponent(), image()]), (e: unknown) => e instanceof ComponentInstallError && e.code === 'IMAGE_IMPORT_FAILED');
    await assert.rejects(readFile(join(root, 'run/state/bin/kubelet')), { code: 'ENOENT' });
  });

  it('validates image install paths', () => {
    const bad = (installPath: string, extract = false) => () => parseComponents([{ ...image(), installPath, extract }]);
    const invalid = (e: unknown) => e instanceof ComponentInstallError && e.code === 'COMPONENT_INVALID';
    assert.throws(bad(`/run/state/images/${REF}`), invalid);
    assert.throws(bad(`/run/state/images/${REF}@sha256:abc`), invalid);
    assert.throws(bad(`/run/state/images/kube-proxy@${manifestDigest}`), invalid);
    assert.throws(bad(`/run/state/images/Localhost/X:1@${manifestDigest}`), invalid);
    assert.throws(bad(imageInstallPath({ ref: REF, digest: manifestDigest }), true), invalid);
    assert.throws(() => parseComponents([image(), image()]), (e: unknown) => invalid(e) && /named twice/.test((e as Error).message));
    assert.deepEqual(parseComponents([image()])[0]!.image, { ref: REF, digest: manifestDigest });
  });

  it('parses ctr images ls and builds digest references', () => {
    const text = `REF TYPE DIGEST SIZE PLATFORMS LABELS\n${REF} application/vnd.oci.image.manifest.v1+json ${manifestDigest} 1.0 MiB linux/amd64 -\nsha256:${'1'.repeat(64)} application/vnd.oci.image.manifest.v1+json ${manifestDigest} 1.0 MiB linux/amd64 -\n`;
    assert.equal(parseImageList(text).get(REF), manifestDigest);
    assert.equal(digestReference({ ref: 'localhost:5000/a/b:v1', digest: manifestDigest }), `localhost:5000/a/b@${manifestDigest}`);
  });
});
