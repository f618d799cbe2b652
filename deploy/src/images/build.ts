/**
 * Builds the image catalog with buildah into OCI archives (docs/adr/0018). Per image: stage the
 * rootfs, hash what was staged, and only if that hash changed run
 * `buildah bud --timestamp 0` on a generated `FROM scratch` Containerfile and
 * `buildah push ... oci:<layout>`, then pack the layout as a tar with sorted names, mtime 0 and
 * owner 0. `--timestamp 0` pins every time stamp inside the image and the packing pins the
 * archive's own, so the same inputs give the same image ID, manifest digest and archive bytes on
 * any machine (docs/adr/0034-components-by-version.md). buildah keeps its storage under the output
 * folder, so deleting that folder removes every trace of a build.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LOCAL_IMAGE_REPOSITORY, type ImageConfig, type ImageInputs, type ImageSpec } from './catalog.js';
import { RootfsStage } from './rootfs.js';

const run = promisify(execFile);

/** One built image and where its archive is. */
export interface BuiltImage {
  name: string;
  /** Fully qualified reference, e.g. `localhost/asterism/kube-apiserver:v1.34.4`. */
  ref: string;
  /** OCI archive (`ctr images import` / `skopeo copy oci-archive:` read it). */
  archive: string;
  /** sha256 over the staged rootfs and the image config: unchanged inputs skip the build. */
  inputsDigest: string;
  /** The image (config) ID buildah computed. */
  imageId: string;
  /** Digest of the image manifest (`sha256:<hex>`), from the archive's index. */
  digest: string;
  /** `sha256:<hex>` of the archive file. */
  archiveHash: string;
  nodes: ImageSpec['nodes'];
}

/** `images.json` in the output folder. */
export interface ImageManifest {
  repository: string;
  images: BuiltImage[];
}

/** Options of {@link buildImages}. */
export interface BuildImagesOptions {
  outDir: string;
  inputs: ImageInputs;
  catalog: ImageSpec[];
  buildah?: string;
  progress?: (line: string) => void;
}

/** The Containerfile of an image: one layer with the staged rootfs, then the config. */
export function containerfile(config: ImageConfig): string {
  const lines = ['FROM scratch', 'COPY rootfs/ /'];
  for (const e of config.env ?? []) lines.push(`ENV ${e.replace(/=(.*)$/, '="$1"')}`);
  if (config.workdir) lines.push(`WORKDIR ${config.workdir}`);
  for (const p of config.ports ?? []) lines.push(`EXPOSE ${p}`);
  if (config.user) lines.push(`USER ${config.user}`);
  lines.push(`ENTRYPOINT ${JSON.stringify(config.entrypoint)}`);
  if (config.cmd) lines.push(`CMD ${JSON.stringify(config.cmd)}`);
  return `${lines.join('\n')}\n`;
}

async function fileDigest(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** Digest over every staged path (type, mode, content or link target) plus the Containerfile. */
async function stagedDigest(stage: RootfsStage, containerfileText: string): Promise<string> {
  const h = createHash('sha256').update(containerfileText);
  for (const p of stage.files) {
    const abs = join(stage.dir, p);
    const st = lstatSync(abs);
    h.update(`\n${p} ${st.mode.toString(8)} `);
    h.update(st.isSymbolicLink() ? `-> ${readlinkSync(abs)}` : await fileDigest(abs));
  }
  return h.digest('hex');
}

async function readManifest(outDir: string): Promise<ImageManifest | undefined> {
  try {
    return JSON.parse(await readFile(join(outDir, 'images.json'), 'utf8')) as ImageManifest;
  } catch {
    return undefined;
  }
}

/**
 * Packs an OCI image layout folder (one image) into `archive` reproducibly: sorted names, mtime 0,
 * owner 0, fixed modes, GNU format (what `ctr images import` and `skopeo oci-archive:` read).
 * Returns the manifest digest from its index and the archive's hash.
 */
export async function packLayout(layout: string, archive: string): Promise<{ digest: string; archiveHash: string }> {
  const index = JSON.parse(await readFile(join(layout, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
  if (index.manifests.length !== 1) throw new Error(`${layout}: want one manifest in index.json, got ${index.manifests.length}`);
  const tmp = `${archive}.tmp`;
  await run('tar', ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner', '--mode=u=rwX,go=rX', '--format=gnu', '-C', layout, '-cf', tmp, 'oci-layout', 'index.json', 'blobs']);
  await rename(tmp, archive);
  return { digest: index.manifests[0]!.digest, archiveHash: `sha256:${await fileDigest(archive)}` };
}

/** Builds (or reuses) every image of the catalog; returns the manifest it wrote. */
export async function buildImages(o: BuildImagesOptions): Promise<ImageManifest> {
  const say = o.progress ?? (() => undefined);
  const buildah = o.buildah ?? 'buildah';
  const storage = ['--root', join(o.outDir, '.buildah', 'storage'), '--runroot', join(o.outDir, '.buildah', 'run')];
  await mkdir(o.outDir, { recursive: true });
  const previous = new Map((await readManifest(o.outDir))?.images.map((i) => [i.name, i]) ?? []);
  const built: BuiltImage[] = [];
  for (const spec of o.catalog) {
    const ref = `${LOCAL_IMAGE_REPOSITORY}/${spec.name}:${spec.tag}`;
    const ctx = join(o.outDir, '.staging', spec.name);
    await rm(ctx, { recursive: true, force: true });
    const stage = new RootfsStage(join(ctx, 'rootfs'));
    spec.stage(stage, o.inputs);
    const text = containerfile(spec.config);
    const digest = await stagedDigest(stage, text);
    const archive = join(o.outDir, `${spec.name}.tar`);
    const old = previous.get(spec.name);
    if (old && old.inputsDigest === digest && old.ref === ref && old.digest && old.archiveHash && existsSync(archive)) {
      say(`  ${ref}: unchanged (${old.imageId.slice(0, 12)})`);
      built.push(old);
      await rm(ctx, { recursive: true, force: true });
      continue;
    }
    const started = Date.now();
    await writeFile(join(ctx, 'Containerfile'), text);
    const iidFile = join(ctx, 'image-id');
    await run(buildah, [...storage, 'bud', '--quiet', '--timestamp', '0', '--layers=false', '--format', 'oci', '--iidfile', iidFile, '-t', ref, '-f', join(ctx, 'Containerfile'), ctx], { maxBuffer: 16 << 20 });
    const layout = join(ctx, 'layout');
    await run(buildah, [...storage, 'push', '--quiet', ref, `oci:${layout}:${ref}`], { maxBuffer: 16 << 20 });
    await run(buildah, [...storage, 'rmi', ref]).catch(() => undefined);
    const imageId = readFileSync(iidFile, 'utf8').trim().replace(/^sha256:/, '');
    const packed = await packLayout(layout, archive);
    built.push({ name: spec.name, ref, archive, inputsDigest: digest, imageId, digest: packed.digest, archiveHash: packed.archiveHash, nodes: spec.nodes });
    say(`  ${ref}: built in ${((Date.now() - started) / 1000).toFixed(1)} s (${imageId.slice(0, 12)})`);
    await rm(ctx, { recursive: true, force: true });
  }
  const manifest: ImageManifest = { repository: LOCAL_IMAGE_REPOSITORY, images: built };
  await writeFile(join(o.outDir, 'images.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}
