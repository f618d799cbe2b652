/**
 * Local container images for the node runtime (docs/adr/0018): `buildLocalImages()` bundles the
 * services, asks kubeadm which tags it expects, and builds the catalog into OCI archives.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderImageOverlay, type ImageOverlay } from '@asterism/versions';
import { bundleApp, REPO_ROOT } from '../bundle.js';
import { buildImages, type ImageManifest } from './build.js';
import { imageCatalog, kubeadmImageTags, SERVICE_BUNDLES, type ImageSpec } from './catalog.js';
import { pinnedPackageRoots } from './debian-pins.js';

export { buildImages, containerfile, type BuiltImage, type ImageManifest } from './build.js';
export { ASTERISM_IMAGE_TAG, imageCatalog, KUBERNETES_VERSION, LOCAL_IMAGE_REPOSITORY, parseImageList, SERVICE_BUNDLES, type ImageSpec } from './catalog.js';
export { canonicalPath, RootfsStage } from './rootfs.js';

/** Default output folder: `dist/images` of this checkout (git-ignored). */
export const DEFAULT_IMAGE_DIR = join(REPO_ROOT, 'dist', 'images');

/** Options of {@link buildLocalImages}. */
export interface LocalImagesOptions {
  /** Kubernetes binaries (tools/k8s-testenv's build folder). */
  k8sBinDir: string;
  /** Version the binaries are (tags of the Kubernetes images; default: the pinned module's). */
  kubernetesVersion?: string;
  outDir?: string;
  /** Only these image names (default: all). */
  only?: string[];
  progress?: (line: string) => void;
}

/** Bundles the services (SERVICE_BUNDLES), then builds (or reuses) every local image. */
export async function buildLocalImages(o: LocalImagesOptions): Promise<ImageManifest> {
  const say = o.progress ?? (() => undefined);
  const outDir = o.outDir ?? DEFAULT_IMAGE_DIR;
  const bundleDir = join(outDir, '.bundles');
  const started = Date.now();
  for (const app of SERVICE_BUNDLES) await bundleApp(app, { outRoot: bundleDir });
  const tags = kubeadmImageTags(join(o.k8sBinDir, 'kubeadm'), o.kubernetesVersion);
  if (!tags.etcd || !tags.pause) throw new Error(`kubeadm did not name etcd and pause images: ${JSON.stringify(tags)}`);
  const catalog: ImageSpec[] = imageCatalog({ etcd: tags.etcd, pause: tags.pause }, o.kubernetesVersion).filter((s) => !o.only || o.only.includes(s.name));
  say(`building ${catalog.length} images into ${outDir} (buildah, FROM scratch, reproducible time stamps)...`);
  const debianRoots = await pinnedPackageRoots(catalog.flatMap((s) => s.pinnedPackages ?? []));
  const manifest = await buildImages({ outDir, inputs: { k8sBinDir: o.k8sBinDir, bundleDir, nodeBinary: process.execPath, debianRoots }, catalog, progress: say });
  await writeFile(join(outDir, IMAGE_OVERLAY_FILE), renderImageOverlay(serviceImageOverlay(manifest)));
  say(`images ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return manifest;
}

/** The overlay file next to images.json (`asterism init --image-overlay`). */
export const IMAGE_OVERLAY_FILE = 'image-overlay.json';

/**
 * Path below the artifact base of a service image archive: named by its hash, so archives of
 * different builds never collide on one artifact server (docs/adr/0034-components-by-version.md).
 */
export function serviceImagePath(archiveHash: string): string {
  return `services/${archiveHash.replace(/^sha256:/, '')}.tar`;
}

/** The project's own service images of a build as an image overlay (libs/versions). */
export function serviceImageOverlay(manifest: ImageManifest): ImageOverlay {
  const services: readonly string[] = SERVICE_BUNDLES;
  return {
    images: manifest.images
      .filter((i) => services.includes(i.name))
      .map((i) => ({ name: i.name, ref: i.ref, digest: i.digest, id: `sha256:${i.imageId.replace(/^sha256:/, '')}`, path: serviceImagePath(i.archiveHash), hash: i.archiveHash })),
  };
}
