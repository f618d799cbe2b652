/**
 * The Kubernetes image archives are reproducible from pinned inputs (docs/adr/0034): kube-proxy
 * (pinned Debian packages) and pause built twice, into two different folders, give the same bytes,
 * and those bytes hash as the checked-in versions manifest says.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { missingComponent } from '@asterism/testing';
import { versionRow } from '@asterism/versions';
import { buildImages } from './build.js';
import { imageCatalog, kubeadmImageTags } from './catalog.js';
import { pinnedPackageRoots } from './debian-pins.js';
import { defaultK8sBinDir, IMAGES_KUBERNETES_VERSION } from './k8s-binaries.js';

const binDir = defaultK8sBinDir();
const hasBuildah = (() => {
  try {
    execFileSync('buildah', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const skip = hasBuildah && existsSync(join(binDir, 'kube-proxy')) ? false : missingComponent('buildah and the Kubernetes binaries', 'bash tools/scripts/setup.sh');

describe('image archives are reproducible', { skip }, () => {
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('kube-proxy and pause: two builds in different folders give the manifest\'s bytes', async () => {
    const tags = kubeadmImageTags(join(binDir, 'kubeadm'), IMAGES_KUBERNETES_VERSION);
    const catalog = imageCatalog({ etcd: tags.etcd!, pause: tags.pause! }, IMAGES_KUBERNETES_VERSION).filter((s) => s.name === 'kube-proxy' || s.name === 'pause');
    const debianRoots = await pinnedPackageRoots(catalog.flatMap((s) => s.pinnedPackages ?? []));
    const builds: Awaited<ReturnType<typeof buildImages>>[] = [];
    for (let i = 0; i < 2; i++) {
      const outDir = await mkdtemp(join(tmpdir(), `images-repro-${i}-`));
      dirs.push(outDir);
      builds.push(await buildImages({ outDir, inputs: { k8sBinDir: binDir, bundleDir: outDir, nodeBinary: process.execPath, debianRoots }, catalog }));
    }
    const row = versionRow(IMAGES_KUBERNETES_VERSION);
    for (const name of ['kube-proxy', 'pause']) {
      const [a, b] = builds.map((m) => m.images.find((i) => i.name === name)!);
      assert.notEqual(a!.archive, b!.archive);
      assert.ok((await readFile(a!.archive)).equals(await readFile(b!.archive)), `${name}: the two archives differ`);
      const want = row.images.find((i) => i.name === name)!;
      assert.equal(a!.archiveHash, want.hash, `${name}: archive hash differs from libs/versions`);
      assert.equal(a!.digest, want.digest);
    }
  });
});
