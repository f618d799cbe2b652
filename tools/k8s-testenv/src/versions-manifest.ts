/**
 * Generates libs/versions' manifest from the packed artifacts (scripts/pack.sh): one row per
 * Kubernetes version with the SHA-256 of every file a node installs and its install path
 * (docs/protocol/components.md). `check` recomputes the hashes from the artifacts on this machine
 * and names every difference: the builds are reproducible, so a difference means another Go
 * version, another module, or a tampered cache.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, link, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { INSTALL_PATHS, type ComponentArtifact, type ImageArtifact, type VersionRow } from '@asterism/versions';

/** The files pack.sh writes per version and how a node installs each. */
export const ARTIFACT_LAYOUT: readonly Omit<ComponentArtifact, 'hash' | 'path'>[] = [
  { name: 'kubelet', installPath: `${INSTALL_PATHS.bin}/kubelet`, extract: false },
  { name: 'kubeadm', installPath: `${INSTALL_PATHS.bin}/kubeadm`, extract: false },
  { name: 'kubectl', installPath: `${INSTALL_PATHS.bin}/kubectl`, extract: false },
  { name: 'crictl', installPath: INSTALL_PATHS.bin, extract: true },
  { name: 'cni-plugins', installPath: INSTALL_PATHS.cni, extract: true },
];

/** File name of an artifact in `<artifacts>/<version>/`. */
export function artifactFile(name: string, extract: boolean): string {
  return extract ? `${name}.tar.gz` : name;
}

/** `sha256:<hex>` of a file, streamed. */
export async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return `sha256:${h.digest('hex')}`;
}

/** The Kubernetes images of a version (the project's own service images change with every build and are not listed). */
export const KUBERNETES_IMAGES = ['pause', 'etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kube-proxy'];

/** An image as deploy's images.json records it (deploy/src/images/build.ts). */
export interface BuiltImageEntry {
  name: string;
  ref: string;
  archive: string;
  imageId: string;
  digest?: string;
  archiveHash?: string;
}

/** Path below the artifact base of a Kubernetes image archive of `version`. */
export function imageArtifactPath(version: string, name: string): string {
  return `${version}/images/${name}.tar`;
}

/** A manifest image from an images.json entry, its archive at `path` (below the artifact base). */
export function imageArtifact(i: BuiltImageEntry, path: string): ImageArtifact {
  if (!i.digest || !i.archiveHash) throw new Error(`images.json entry ${i.ref} has no digest/archiveHash: rebuild the images (npx nx run deploy:images)`);
  return { name: i.name, ref: i.ref, digest: i.digest, id: i.imageId.startsWith('sha256:') ? i.imageId : `sha256:${i.imageId}`, path, hash: i.archiveHash };
}

/** The entries of an images.json, or none when it does not exist. */
export async function readBuiltImages(imagesJson: string | undefined): Promise<BuiltImageEntry[]> {
  if (!imagesJson) return [];
  try {
    return (JSON.parse(await readFile(imagesJson, 'utf8')) as { images: BuiltImageEntry[] }).images;
  } catch {
    return [];
  }
}

/**
 * The Kubernetes images of a version from the `images.json` deploy's image build wrote (digests
 * and archive hashes are reproducible: pinned inputs, buildah --timestamp 0, packed archives);
 * none when not built.
 */
export async function readImages(imagesJson: string | undefined, version: string): Promise<ImageArtifact[]> {
  return (await readBuiltImages(imagesJson)).filter((i) => KUBERNETES_IMAGES.includes(i.name)).map((i) => imageArtifact(i, imageArtifactPath(version, i.name)));
}

/**
 * Puts the Kubernetes image archives of `version` where the artifact server serves them
 * (`<artifactsRoot>/<version>/images/<name>.tar`, hard-linked when possible).
 */
export async function publishImages(artifactsRoot: string, version: string, images: readonly BuiltImageEntry[]): Promise<void> {
  for (const i of images.filter((x) => KUBERNETES_IMAGES.includes(x.name))) await publishFile(i.archive, join(artifactsRoot, imageArtifactPath(version, i.name)));
}

/** Hard-links (or copies) `from` to `to` through a temporary name, replacing `to`. */
export async function publishFile(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  const tmp = `${to}.${process.pid}.tmp`;
  await rm(tmp, { force: true });
  await link(from, tmp).catch(() => copyFile(from, tmp));
  await rename(tmp, to);
}

/**
 * The manifest row of one version from its packed artifacts in `<artifactsRoot>/<version>/` and,
 * when given, the images.json of that version's image build.
 */
export async function rowFromArtifacts(artifactsRoot: string, version: string, imagesJson?: string): Promise<VersionRow> {
  const dir = join(artifactsRoot, version);
  const components: ComponentArtifact[] = [];
  for (const a of ARTIFACT_LAYOUT) {
    const file = artifactFile(a.name, a.extract);
    components.push({ ...a, path: `${version}/${file}`, hash: await sha256File(join(dir, file)) });
  }
  return { kubernetesVersion: version, components, images: await readImages(imagesJson, version) };
}

/** The checked-in TypeScript source of a manifest. */
export function renderManifest(rows: readonly VersionRow[]): string {
  return [
    '// Generated by `npx nx run k8s-testenv:versions-manifest` (tools/k8s-testenv/src/versions-manifest.ts)',
    '// from the artifacts tools/k8s-testenv/scripts/pack.sh built. Do not edit by hand.',
    "import type { VersionRow } from './manifest.js';",
    '',
    '/** Every supported Kubernetes version and what its nodes install (docs/protocol/components.md). */',
    `export const MANIFEST: readonly VersionRow[] = ${JSON.stringify(rows, null, 2)};`,
    '',
  ].join('\n');
}

/** Differences between two rows of the same version, one line each (empty when equal). */
export function rowDifferences(want: VersionRow, got: VersionRow): string[] {
  const out: string[] = [];
  for (const w of want.components) {
    const g = got.components.find((c) => c.name === w.name);
    if (!g) out.push(`${want.kubernetesVersion} ${w.name}: missing in the artifacts`);
    else if (g.hash !== w.hash) out.push(`${want.kubernetesVersion} ${w.name}: manifest ${w.hash}, built ${g.hash}`);
  }
  for (const w of want.images) {
    const g = got.images.find((i) => i.name === w.name);
    if (g && g.digest !== w.digest) out.push(`${want.kubernetesVersion} image ${w.name}: manifest ${w.digest}, built ${g.digest}`);
    if (g && g.ref !== w.ref) out.push(`${want.kubernetesVersion} image ${w.name}: manifest ${w.ref}, built ${g.ref}`);
    if (g && g.hash !== w.hash) out.push(`${want.kubernetesVersion} image ${w.name} archive: manifest ${w.hash}, built ${g.hash}`);
  }
  return out;
}

/** Writes the manifest source to `path` from the artifacts of `versions` (and their images.json files, by version). */
export async function writeManifest(path: string, artifactsRoot: string, versions: readonly string[], imagesJson: (version: string) => string): Promise<VersionRow[]> {
  const rows: VersionRow[] = [];
  for (const v of versions) rows.push(await rowFromArtifacts(artifactsRoot, v, imagesJson(v)));
  await writeFile(path, renderManifest(rows));
  return rows;
}
