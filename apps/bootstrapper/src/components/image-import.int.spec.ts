/**
 * The installer's image path against a real containerd (its own root, state and socket, with its
 * CRI plugin): a hand-built OCI archive is fetched over file:, hash-checked, imported into the
 * k8s.io namespace and checked by digest, and the CRI (what the kubelet asks) resolves the image by
 * its digest reference; a tampered archive and a wrong digest import nothing.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createNopLogger } from '@asterism/logger';
import { cacheRoot } from '@asterism/k8s-testenv';
import { missingComponent } from '@asterism/testing';
import { imageInstallPath } from '@asterism/versions';
import { ComponentInstaller } from './component-installer.js';
import { ComponentInstallError } from './component-spec.js';
import { CtrImageStore } from './image-store.js';

const sha = (b: Buffer | string) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const REF = 'localhost/asterism-test/hello:1';
const isRoot = process.getuid?.() === 0;
const hasContainerd = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v containerd && command -v ctr'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const crictl = join(cacheRoot(), 'node-tools', 'bin', 'crictl');
const skip = hasContainerd && isRoot && existsSync(crictl) ? false : missingComponent('containerd, ctr (as root) and crictl', 'apt-get install containerd; bash tools/scripts/setup.sh builds crictl');

/** A minimal real OCI image (one uncompressed layer with /hello) as an archive; returns its manifest digest. */
async function writeOciArchive(dir: string, file: string): Promise<string> {
  const layout = join(dir, 'layout');
  const blobs = join(layout, 'blobs', 'sha256');
  await mkdir(join(dir, 'rootfs'), { recursive: true });
  await mkdir(blobs, { recursive: true });
  await writeFile(join(dir, 'rootfs', 'hello'), 'hello from an image component\n');
  const layer = execFileSync('tar', ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner', '-C', join(dir, 'rootfs'), '-cf', '-', 'hello']);
  const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', config: { Cmd: ['/hello'] }, rootfs: { type: 'layers', diff_ids: [sha(layer)] } }));
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: sha(config), size: config.length },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: sha(layer), size: layer.length }],
    }),
  );
  for (const b of [layer, config, manifest]) await writeFile(join(blobs, sha(b).slice(7)), b);
  await writeFile(join(layout, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
  const index = { schemaVersion: 2, manifests: [{ mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: sha(manifest), size: manifest.length, annotations: { 'org.opencontainers.image.ref.name': REF } }] };
  await writeFile(join(layout, 'index.json'), JSON.stringify(index));
  execFileSync('tar', ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner', '-C', layout, '-cf', file, 'oci-layout', 'index.json', 'blobs']);
  return sha(manifest);
}

describe('ComponentInstaller: images into a real containerd', { skip }, () => {
  let dir: string;
  let containerd: ChildProcess;
  let socket: string;
  let archive: string;
  let digest: string;
  const ctr = (...args: string[]) => execFileSync('ctr', ['--address', socket, '--namespace', 'k8s.io', ...args]).toString();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'image-import-int-'));
    socket = join(dir, 'containerd.sock');
    const config = join(dir, 'config.toml');
    await writeFile(config, `version = 2\nroot = "${dir}/root"\nstate = "${dir}/state"\n[grpc]\n  address = "${socket}"\n[plugins."io.containerd.grpc.v1.cri"]\n  restrict_oom_score_adj = true\n  [plugins."io.containerd.grpc.v1.cri".cni]\n    bin_dir = "${dir}/cni"\n    conf_dir = "${dir}/cni"\n`);
    containerd = spawn('containerd', ['--config', config], { stdio: 'ignore' });
    for (let i = 0; i < 100 && !existsSync(socket); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(existsSync(socket), 'containerd did not start');
    archive = join(dir, 'hello.tar');
    digest = await writeOciArchive(dir, archive);
  });
  after(async () => {
    // A test instance: no graceful CRI shutdown needed (it takes seconds); nothing stays mounted.
    const exited = new Promise((r) => containerd?.once('exit', r));
    containerd?.kill('SIGKILL');
    await exited;
    assert.ok(!(await readFile('/proc/mounts', 'utf8')).includes(dir), 'no mount of the test containerd is left');
    await rm(dir, { recursive: true, force: true });
  });

  const installer = () => new ComponentInstaller({ logger: createNopLogger(), resolve: (p) => join(dir, 'node', p), stagingParent: dir, images: new CtrImageStore({ address: socket }) });
  const component = async (url: string, expectedDigest = digest) => ({ url, hash: sha(await readFile(archive)), installPath: imageInstallPath({ ref: REF, digest: expectedDigest }), extract: false });

  it('a tampered archive (one byte changed) is refused before anything is imported', async () => {
    const bytes = await readFile(archive);
    const tampered = Buffer.from(bytes);
    tampered.writeUInt8(tampered.readUInt8(tampered.length - 1024) ^ 0xff, tampered.length - 1024);
    await writeFile(join(dir, 'tampered.tar'), tampered);
    await assert.rejects(installer().install([await component(pathToFileURL(join(dir, 'tampered.tar')).toString())]), (e: unknown) => {
      assert.ok(e instanceof ComponentInstallError && e.code === 'HASH_MISMATCH');
      assert.equal(e.details?.expected, sha(bytes));
      assert.equal(e.details?.actual, sha(tampered));
      return true;
    });
    assert.doesNotMatch(ctr('images', 'ls', '-q'), /asterism-test/);
  });

  it('a manifest digest other than the expected one is refused before the import', async () => {
    const wrong = `sha256:${'0'.repeat(64)}`;
    await assert.rejects(installer().install([await component(pathToFileURL(archive).toString(), wrong)]), (e: unknown) => e instanceof ComponentInstallError && e.code === 'IMAGE_DIGEST_MISMATCH' && e.details?.actual === digest && e.details?.expected === wrong);
    assert.doesNotMatch(ctr('images', 'ls', '-q'), /asterism-test/);
  });

  it('imports the checked archive, resolves tag and digest references to the digest, then skips it', async () => {
    const c = await component(pathToFileURL(archive).toString());
    assert.deepEqual(await installer().install([c]), { installed: ['hello'], skipped: [] });
    const list = ctr('images', 'ls');
    assert.match(list, new RegExp(`^${REF}\\s+\\S+\\s+${digest}`, 'm'));
    assert.match(list, new RegExp(`^localhost/asterism-test/hello@${digest}\\s+\\S+\\s+${digest}`, 'm'));
    assert.match(ctr('content', 'ls', '-q'), new RegExp(digest.slice(7)));
    // The kubelet asks the CRI; a pod naming the image by digest finds it through the digest name.
    const cri = JSON.parse(execFileSync(crictl, ['--runtime-endpoint', `unix://${socket}`, '--image-endpoint', `unix://${socket}`, 'inspecti', `localhost/asterism-test/hello@${digest}`], { stdio: ['ignore', 'pipe', 'ignore'] }).toString()) as { status: { repoTags: string[] } };
    assert.deepEqual(cri.status.repoTags, [REF]);
    assert.deepEqual(await installer().install([c]), { installed: [], skipped: ['hello'] });
  });
});
