/**
 * The service images as OCI archives: deploy's buildah pipeline (docs/adr/0018: `FROM scratch`,
 * `--timestamp 0`, the esbuild bundle and this machine's Node 20 on its Debian libraries) for the
 * programs that run as pods, each archive with its manifest digest (what a registry would call
 * the image, `<repository>@sha256:...`).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bundleApp, buildImages, imageCatalog, SERVICE_BUNDLES } from '@asterism/deploy';
import { extractTar, writeReproducibleTar } from './repro-tar.js';

const run = promisify(execFile);

/** One image archive of the release. */
export interface ReleaseImage {
  name: string;
  /** e.g. `localhost/asterism/joinservice:0.1.0` (the charts take the repository as a value). */
  ref: string;
  /** `sha256:<hex>` of the image manifest inside the archive. */
  digest: string;
  file: string;
}

/** Options of {@link buildReleaseImages}. */
export interface ReleaseImagesOptions {
  /** Where the archives go. */
  outDir: string;
  /** Build folder (bundles, buildah storage); a fixed path keeps the bundles' source maps equal between builds. */
  workDir: string;
  /** Time stamps of the archives' tar entries (the image contents carry buildah's `--timestamp 0`). */
  epoch: number;
  progress?: (line: string) => void;
}

/** The manifest digest recorded in an OCI archive's index.json (one image per archive). */
export async function ociArchiveDigest(archive: string): Promise<string> {
  const { stdout } = await run('tar', ['-xOf', archive, 'index.json'], { maxBuffer: 1 << 20 });
  const index = JSON.parse(stdout) as { manifests?: { digest?: string }[] };
  const digest = index.manifests?.[0]?.digest;
  if (index.manifests?.length !== 1 || !digest || !/^sha256:[0-9a-f]{64}$/.test(digest)) throw new Error(`${archive}: index.json does not name exactly one manifest`);
  return digest;
}

/**
 * Copies an OCI archive with its tar entries made reproducible: the image blobs are identical
 * between builds (same digests), but buildah writes the archive's own entries with the time of
 * the push.
 */
async function repackOciArchive(archive: string, out: string, epoch: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'asterism-oci-'));
  try {
    await extractTar(archive, dir);
    await writeReproducibleTar(dir, await readdir(dir), out, epoch);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Bundles the services and builds their images; returns the archives in `outDir`. */
export async function buildReleaseImages(o: ReleaseImagesOptions): Promise<ReleaseImage[]> {
  const bundleDir = join(o.workDir, 'bundles');
  for (const app of SERVICE_BUNDLES) await bundleApp(app, { outRoot: bundleDir });
  const names: readonly string[] = SERVICE_BUNDLES;
  // Only the service images: their specs do not use the Kubernetes image tags or binaries.
  const catalog = imageCatalog({ etcd: 'unused', pause: 'unused' }).filter((s) => names.includes(s.name));
  const built = await buildImages({ outDir: join(o.workDir, 'images'), inputs: { k8sBinDir: '', bundleDir, nodeBinary: process.execPath }, catalog, ...(o.progress ? { progress: o.progress } : {}) });
  await mkdir(o.outDir, { recursive: true });
  const out: ReleaseImage[] = [];
  for (const image of built.images) {
    const tag = image.ref.slice(image.ref.lastIndexOf(':') + 1);
    const file = join(o.outDir, `${image.name}-${tag}.oci.tar`);
    await repackOciArchive(image.archive, file, o.epoch);
    out.push({ name: image.name, ref: image.ref, digest: await ociArchiveDigest(file), file });
  }
  return out;
}
