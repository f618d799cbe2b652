/**
 * The image steps of the component installer (docs/protocol/components.md, "Image components"):
 * before anything is installed, the hash-checked archive's index must name the expected manifest
 * digest for the component's reference; after the import, containerd must resolve the reference
 * to that digest (otherwise the name is removed again), and the image also gets its digest
 * reference (`<repository>@<digest>`) so pod specs can name it by digest.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ImageTarget } from '@asterism/versions';
import { ComponentInstallError, type ComponentSpec } from './component-spec.js';
import type { ImageStore } from './image-store.js';

const run = promisify(execFile);
const REF_NAME = 'org.opencontainers.image.ref.name';
const CONTAINERD_NAME = 'io.containerd.image.name';

/** An OCI index entry as far as the check reads it. */
interface IndexEntry {
  digest?: unknown;
  annotations?: Record<string, unknown>;
}

/** The manifest digest the archive's `index.json` gives `ref` (by its name annotation), or undefined. */
export async function archiveDigest(file: string, ref: string): Promise<string | undefined> {
  let text: string;
  try {
    ({ stdout: text } = await run('tar', ['-xOf', file, 'index.json'], { timeout: 60_000, maxBuffer: 4 << 20 }));
  } catch {
    return undefined;
  }
  let entries: IndexEntry[];
  try {
    entries = ((JSON.parse(text) as { manifests?: IndexEntry[] }).manifests ?? []).filter((m) => typeof m === 'object' && m !== null);
  } catch {
    return undefined;
  }
  const named = entries.find((m) => m.annotations?.[REF_NAME] === ref || m.annotations?.[CONTAINERD_NAME] === ref);
  return typeof named?.digest === 'string' ? named.digest : undefined;
}

/** The mismatch error: names the image and both digests. */
export function digestMismatch(spec: ComponentSpec, image: ImageTarget, actual: string, where: string): ComponentInstallError {
  return new ComponentInstallError(
    'IMAGE_DIGEST_MISMATCH',
    `component ${spec.name}: image ${image.ref} ${where} has digest ${actual}, expected ${image.digest}; the image was not imported`,
    { details: { component: spec.name, image: image.ref, expected: image.digest, actual } },
  );
}

/** Stage 1 for an image: the checked archive must carry the expected manifest for the reference. */
export async function checkArchive(spec: ComponentSpec, image: ImageTarget, file: string): Promise<void> {
  const got = await archiveDigest(file, image.ref);
  if (got !== image.digest) throw digestMismatch(spec, image, got ?? '(none: the archive does not name this reference)', 'in its archive');
}

/** Stage 2 for an image: import, check what containerd resolves, add the digest reference. */
export async function importImage(store: ImageStore, spec: ComponentSpec, image: ImageTarget, file: string): Promise<void> {
  try {
    await store.importArchive(file);
  } catch (err) {
    throw new ComponentInstallError('IMAGE_IMPORT_FAILED', `component ${spec.name}: importing image ${image.ref}: ${firstLine(err)}`, { details: { component: spec.name, image: image.ref }, cause: err });
  }
  const got = await store.digestOf(image.ref);
  if (got !== image.digest) {
    await store.remove(image.ref).catch(() => undefined);
    throw digestMismatch(spec, image, got ?? '(none: not found after the import)', 'in containerd');
  }
  await store.tag(image.ref, digestReference(image));
}

/** Whether containerd already resolves the reference to the expected digest. */
export async function imagePresent(store: ImageStore, image: ImageTarget): Promise<boolean> {
  return (await store.digestOf(image.ref)) === image.digest && (await store.digestOf(digestReference(image))) === image.digest;
}

/** `<repository>@<digest>` of a tagged reference. */
export function digestReference(image: ImageTarget): string {
  return `${image.ref.replace(/:[^:/]+$/, '')}@${image.digest}`;
}

function firstLine(err: unknown): string {
  const e = err as { stderr?: string; message?: string };
  return (e.stderr?.trim() || e.message || String(err)).split('\n')[0]!.slice(0, 300);
}
