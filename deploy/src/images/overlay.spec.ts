import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseImageOverlay, renderImageOverlay } from '@asterism/versions';
import { DEBIAN_PINS, pinOf } from './debian-pins.js';
import { serviceImageOverlay, serviceImagePath } from './index.js';
import { packageTreeFiles, StagingError } from './rootfs.js';

const h = (c: string) => `sha256:${c.repeat(64)}`;

describe('image overlay and pinned packages', () => {
  it('the overlay holds only the service images, at content-addressed paths, and parses back', () => {
    const image = (name: string, c: string) => ({ name, ref: `localhost/asterism/${name}:0.1.0`, archive: `/x/${name}.tar`, inputsDigest: 'x', imageId: c.repeat(64), digest: h(c), archiveHash: h('f'), nodes: 'all' as const });
    const overlay = serviceImageOverlay({ repository: 'localhost/asterism', images: [image('kube-proxy', 'a'), image('joinservice', 'b'), image('keyservice', 'c')] });
    assert.deepEqual(overlay.images.map((i) => i.name), ['joinservice', 'keyservice']);
    assert.deepEqual(overlay.images[0], { name: 'joinservice', ref: 'localhost/asterism/joinservice:0.1.0', digest: h('b'), id: h('b'), path: `services/${'f'.repeat(64)}.tar`, hash: h('f') });
    assert.equal(serviceImagePath(h('f')), `services/${'f'.repeat(64)}.tar`);
    assert.deepEqual(parseImageOverlay(renderImageOverlay(overlay)), overlay);
  });

  it('every kube-proxy package is pinned with a version and a .deb hash; an unpinned one is an error', () => {
    for (const [pkg, pin] of Object.entries(DEBIAN_PINS)) {
      assert.match(pin.sha256, /^[0-9a-f]{64}$/, pkg);
      assert.ok(pin.version.length > 0 && pin.architecture.length > 0, pkg);
    }
    assert.throws(() => pinOf('no-such-package'), (e: unknown) => e instanceof StagingError && /no pin/.test((e as Error).message));
  });

  it('an unpacked package tree lists files and links, sorted, without documentation', async () => {
    const root = await mkdtemp(join(tmpdir(), 'pkg-tree-'));
    try {
      await mkdir(join(root, 'usr/sbin'), { recursive: true });
      await mkdir(join(root, 'usr/share/doc/x'), { recursive: true });
      await writeFile(join(root, 'usr/sbin/xtables-nft-multi'), 'bin');
      await writeFile(join(root, 'usr/share/doc/x/copyright'), 'doc');
      await symlink('xtables-nft-multi', join(root, 'usr/sbin/iptables-nft'));
      assert.deepEqual(packageTreeFiles(root), ['/usr/sbin/iptables-nft', '/usr/sbin/xtables-nft-multi']);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
