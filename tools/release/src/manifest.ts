/**
 * The release manifest: what was built from which commit, and every artifact with its SHA-256
 * (plus `SHA256SUMS` in the `sha256sum -c` format). Paths are relative to the release folder and
 * the lists sorted, so two builds of one commit write the same bytes.
 */
import { statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { sha256File } from './hashing.js';

/** One artifact of the release. */
export interface Artifact {
  kind: 'cli' | 'cli-bundle' | 'cli-licenses' | 'helm-chart' | 'image' | 'bootstrapper-bundle';
  /** Relative to the release folder. */
  path: string;
  sha256: string;
  bytes: number;
  /** Chart name, image name, ... */
  name?: string;
  /** Chart version. */
  version?: string;
  appVersion?: string;
  /** Image reference and manifest digest. */
  ref?: string;
  digest?: string;
  platform?: string;
}

/** `manifest.json` of a release. */
export interface ReleaseManifest {
  name: 'asterism';
  version: string;
  commit: string;
  /** Seconds since 1970: the time stamps inside every archive (SOURCE_DATE_EPOCH). */
  sourceDateEpoch: number;
  /** The Node.js runtime inside the executable and the images. */
  node: string;
  kubernetesVersions: string[];
  attestationVariants: string[];
  artifacts: Artifact[];
}

/** Describes a file of the release folder `root`. */
export async function artifact(root: string, file: string, fields: Omit<Artifact, 'path' | 'sha256' | 'bytes'>): Promise<Artifact> {
  return { ...fields, path: relative(root, file), sha256: await sha256File(file), bytes: statSync(file).size };
}

/** Writes `manifest.json` and `SHA256SUMS` (artifacts sorted by path). */
export async function writeManifest(root: string, m: ReleaseManifest): Promise<ReleaseManifest> {
  const sorted: ReleaseManifest = { ...m, artifacts: [...m.artifacts].sort((a, b) => a.path.localeCompare(b.path)) };
  await writeFile(join(root, 'manifest.json'), `${JSON.stringify(sorted, null, 2)}\n`);
  await writeFile(join(root, 'SHA256SUMS'), sorted.artifacts.map((a) => `${a.sha256}  ${a.path}\n`).join(''));
  return sorted;
}
