/**
 * The image overlay: the project's own service images (joinservice, keyservice, verification
 * service, attestation monitor) of one build, with their digests. They change with every code
 * change, so they are not rows of the checked-in manifest: the image build writes this overlay next
 * to its archives (docs/adr/0034-components-by-version.md), `asterism init --image-overlay` adds
 * them to the components (nodes import them checked by hash and digest) and deploys the charts
 * with `image.digest`, so every service pod names its image by digest.
 */
import { VersionsError, type ImageArtifact } from './manifest.js';

/** The overlay file: `{ "images": [ImageArtifact...] }`. */
export interface ImageOverlay {
  readonly images: readonly ImageArtifact[];
}

const HASH = /^sha256:[0-9a-f]{64}$/;
const NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** Parses and validates an overlay (JSON text); every problem is IMAGE_OVERLAY_INVALID naming the entry. */
export function parseImageOverlay(text: string): ImageOverlay {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw invalid('the overlay is not JSON');
  }
  const list = (raw as { images?: unknown })?.images;
  if (!Array.isArray(list)) throw invalid('the overlay needs an "images" list');
  const seen = new Set<string>();
  const images = list.map((entry: unknown, i) => {
    const e = (entry ?? {}) as Record<string, unknown>;
    const str = (k: string) => (typeof e[k] === 'string' ? (e[k] as string) : '');
    const img: ImageArtifact = { name: str('name'), ref: str('ref'), digest: str('digest'), id: str('id'), path: str('path'), hash: str('hash') };
    if (!NAME.test(img.name)) throw invalid(`images[${i}]: name ${JSON.stringify(img.name)} is not an image name`);
    if (!img.ref.includes('/') || !img.ref.includes(':')) throw invalid(`images[${i}] (${img.name}): ref ${JSON.stringify(img.ref)} must be fully qualified with a tag`);
    for (const k of ['digest', 'id', 'hash'] as const) if (!HASH.test(img[k])) throw invalid(`images[${i}] (${img.name}): ${k} must be sha256:<64 lower-case hex>`);
    if (img.path === '' || img.path.startsWith('/') || img.path.split('/').includes('..')) throw invalid(`images[${i}] (${img.name}): path ${JSON.stringify(img.path)} must be relative to the artifact base`);
    if (seen.has(img.name)) throw invalid(`images[${i}]: image ${img.name} is named twice`);
    seen.add(img.name);
    return img;
  });
  return { images };
}

/** The overlay's JSON text. */
export function renderImageOverlay(overlay: ImageOverlay): string {
  return `${JSON.stringify({ images: overlay.images }, null, 2)}\n`;
}

function invalid(why: string): VersionsError {
  return new VersionsError('IMAGE_OVERLAY_INVALID', `image overlay: ${why}`);
}
