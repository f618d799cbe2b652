/**
 * Scenarios: images reach the nodes without a registry (docs/protocol/components.md). The
 * Kubernetes and service images are imported by each node's bootstrapper, checked by digest; a
 * user's own OCI archive is loaded onto every node with `load-image` and runs as a pod.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@asterism/testing';
import { CONTROL_PLANE_ONLY_IMAGES, versionRow } from '@asterism/versions';
import { imagesOnNodes, loadImageOnNodes, nodeContainerdSocket } from '../load-image.js';
import type { RealClusterContext } from './context.js';

const sha = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/**
 * On every node the version's images resolve (tag and digest reference) to the manifest's digest
 * and the bootstrapper logged each archive as verified; a worker left out the control plane's
 * images (libs/versions node-roles.ts); the service pods name their images by digest.
 */
export async function imagesImportedByInstaller(ctx: RealClusterContext, nodes: string[], version: string): Promise<void> {
  const row = versionRow(version);
  for (const name of nodes) {
    const list = execFileSync('ctr', ['--address', nodeContainerdSocket(ctx.layout, name), '-n', 'k8s.io', 'images', 'ls']).toString();
    const worker = !name.startsWith('control-plane');
    const wanted = row.images.filter((i) => !worker || !CONTROL_PLANE_ONLY_IMAGES.includes(i.name));
    for (const i of row.images.filter((x) => !wanted.includes(x))) assert.doesNotMatch(list, new RegExp(`^${i.ref.replace(/[.]/g, '\\.')}\\s`, 'm'), `${name} (a worker) did not import ${i.ref}`);
    for (const i of wanted) {
      assert.match(list, new RegExp(`^${i.ref.replace(/[.]/g, '\\.')}\\s+\\S+\\s+${i.digest}`, 'm'), `${name}: ${i.ref} -> ${i.digest}`);
      assert.match(list, new RegExp(`^${i.ref.replace(/:[^:]+$/, '').replace(/[.]/g, '\\.')}@${i.digest}\\s`, 'm'), `${name}: digest reference of ${i.name}`);
    }
    const log = await readFile(ctx.layout.log(name, 'bootstrapper.json'), 'utf8');
    for (const i of wanted) assert.match(log, new RegExp(`"component":"${i.name}"`), `${name}: ${i.name} fetched and verified`);
  }
  const images = ctx.kubectl('get', 'pods', '-n', 'kube-system', '-o', 'jsonpath={range .items[*]}{.spec.containers[0].image}{"\\n"}{end}');
  for (const svc of ['joinservice', 'keyservice', 'verification-service']) assert.match(images, new RegExp(`^localhost/asterism/${svc}@sha256:[0-9a-f]{64}$`, 'm'), `${svc} pod names its image by digest`);
  ctx.log(`${nodes.length} nodes: ${row.images.length} Kubernetes images imported by the installer; service pods use digests`);
}

/** A hand-built OCI archive `localhost/<name>:1` whose one layer holds the host's static busybox. */
async function userArchive(dir: string, name: string): Promise<string> {
  const rootfs = join(dir, 'rootfs');
  await mkdir(join(rootfs, 'bin'), { recursive: true });
  execFileSync('cp', ['/bin/busybox', join(rootfs, 'bin', 'busybox')]);
  await symlink('busybox', join(rootfs, 'bin', 'sh'));
  const layer = execFileSync('tar', ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner', '-C', rootfs, '-cf', '-', 'bin'], { maxBuffer: 64 << 20 });
  const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', config: { Entrypoint: ['/bin/sh', '-c'], Cmd: ['echo hello'] }, rootfs: { type: 'layers', diff_ids: [sha(layer)] } }));
  const manifest = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.manifest.v1+json', config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: sha(config), size: config.length }, layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: sha(layer), size: layer.length }] }));
  const layout = join(dir, 'layout');
  await mkdir(join(layout, 'blobs', 'sha256'), { recursive: true });
  for (const b of [layer, config, manifest]) await writeFile(join(layout, 'blobs', 'sha256', sha(b).slice(7)), b);
  await writeFile(join(layout, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
  await writeFile(join(layout, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: [{ mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: sha(manifest), size: manifest.length, annotations: { 'org.opencontainers.image.ref.name': `localhost/${name}:1` } }] }));
  const archive = join(dir, `${name}.tar`);
  execFileSync('tar', ['-C', layout, '-cf', archive, 'oci-layout', 'index.json', 'blobs']);
  return archive;
}

/** The README workflow: load a user's archive onto every node, list it, run a pod of it on each node. */
export async function userArchiveRunsAsPod(ctx: RealClusterContext, nodes: string[]): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'user-image-'));
  try {
    const archive = await userArchive(dir, 'my-app');
    assert.deepEqual(await loadImageOnNodes(ctx.root, archive, ctx.log), ['localhost/my-app:1']);
    assert.ok((await imagesOnNodes(ctx.root)).includes('localhost/my-app:1'));
    const pods = nodes.map((node) => ({ node, pod: `my-app-${node}` }));
    for (const { node, pod } of pods) ctx.kubectl('run', pod, '--image=localhost/my-app:1', '--image-pull-policy=Never', '--restart=Never', `--overrides={"spec":{"nodeName":"${node}"}}`, '--', `echo hello from ${node}`);
    for (const { node, pod } of pods) {
      await eventually(`${pod} Succeeded`, async () => ((await ctx.core.readNamespacedPod({ name: pod, namespace: 'default' })).status?.phase === 'Succeeded' ? true : undefined), 90_000);
      // The phase can be Succeeded before the shim has copied the short-lived container's output to its log file (seen once in CI: an empty log).
      const out = await eventually(`${pod} log`, async () => ctx.kubectl('logs', pod).trim() || undefined, 30_000).catch(() => ctx.kubectl('logs', pod).trim());
      assert.equal(out, `hello from ${node}`);
    }
    for (const { pod } of pods) ctx.kubectl('delete', 'pod', pod, '--wait=false');
    ctx.log(`user archive localhost/my-app:1 loaded onto ${nodes.length} nodes; a pod of it ran on each`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
