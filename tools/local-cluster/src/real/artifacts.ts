/**
 * The Kubernetes components of a local cluster (docs/protocol/components.md): packed by
 * tools/k8s-testenv (built first when needed), checked against the checked-in versions manifest,
 * and served to the nodes by an artifact server on the bridge of the private network.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { IMAGE_OVERLAY_FILE, SERVICE_BUNDLES, serviceImageOverlay, type BuiltImage, type ImageManifest } from '@asterism/deploy';
import { artifactsRoot, binDir, K8S_VERSION, KUBERNETES_IMAGES, publishFile, publishImages, rowDifferences, rowFromArtifacts, type BuiltImageEntry } from '@asterism/k8s-testenv';
import { renderImageOverlay, versionRow } from '@asterism/versions';
import { TSX, WORKSPACE_ROOT } from '../cluster.js';
import { startDetached } from '../detached.js';
import type { ClusterLayout } from '../layout.js';
import { NETWORK } from './network.js';

/** Port of the artifact server on the router's bridge address (inside the private network only). */
export const ARTIFACT_PORT = 8099;
const SERVER = join(WORKSPACE_ROOT, 'tools/local-cluster/src/real/artifact-server.ts');
const PACK = join(WORKSPACE_ROOT, 'tools/k8s-testenv/scripts/pack.sh');

/** The base URL nodes fetch components from. */
export function artifactBaseUrl(): string {
  return `http://${NETWORK.routerIp}:${ARTIFACT_PORT}/`;
}

/** Differences between the manifest row of `version` and the packed artifacts ("missing" when not packed). */
async function differences(version: string): Promise<string[]> {
  try {
    return rowDifferences(versionRow(version), await rowFromArtifacts(artifactsRoot(), version));
  } catch (err) {
    return [`${version}: ${(err as Error).message}`];
  }
}

/**
 * Makes sure the artifacts of `version` exist and hash as the manifest says (runs pack.sh, which
 * builds what is missing, when they do not); returns the folder with that version's binaries
 * (for the images). A difference after packing means this machine does not reproduce the
 * checked-in hashes: that is an error naming each artifact, not something to paper over.
 */
export async function prepareArtifacts(version: string, pinnedBinDir: string, say: (l: string) => void): Promise<string> {
  if ((await differences(version)).length > 0) {
    say(`packing ${version} (bash tools/k8s-testenv/scripts/pack.sh ${version}; a first build of a version takes many minutes)...`);
    await new Promise<void>((resolve, reject) =>
      execFile('bash', [PACK, version], { maxBuffer: 64 * 1024 * 1024 }, (err, _out, stderr) => (err ? reject(new Error(`pack.sh ${version} failed: ${stderr.trim().split('\n').slice(-3).join(' | ')}`)) : resolve())),
    );
    const left = await differences(version);
    if (left.length > 0) throw new Error(`the artifacts built here do not match libs/versions (regenerate with npx nx run k8s-testenv:versions-manifest --mode=write if the change is intended): ${left.join('; ')}`);
  }
  return version === K8S_VERSION ? pinnedBinDir : binDir(version);
}

/**
 * The Kubernetes images just built against the manifest (reference, digest, archive hash): one
 * line per difference. The archives are reproducible from pinned inputs, so a difference means
 * this machine built other bytes; nodes would refuse them (hash check), so `up` stops here.
 */
export function imageDifferences(version: string, built: readonly BuiltImageEntry[]): string[] {
  const out: string[] = [];
  for (const want of versionRow(version).images) {
    const got = built.find((b) => b.name === want.name);
    if (!got) out.push(`${want.ref}: not built`);
    else if (got.ref !== want.ref || got.digest !== want.digest || got.archiveHash !== want.hash) out.push(`${want.name}: manifest ${want.ref}@${want.digest} archive ${want.hash}, built ${got.ref}@${got.digest} archive ${got.archiveHash}`);
  }
  return out;
}

/** Images no component carries: the supervisor imports these itself (workloads such as busybox). */
export function workloadImages(images: ImageManifest): BuiltImage[] {
  const carried: readonly string[] = [...KUBERNETES_IMAGES, ...SERVICE_BUNDLES];
  return images.images.filter((i) => !carried.includes(i.name));
}

/**
 * Puts the image archives where the artifact server serves them: the version's Kubernetes images
 * at `<version>/images/<name>.tar` (checked against the manifest first), the service images at
 * their content-addressed paths; writes the image overlay into the cluster folder and returns it.
 */
export async function publishNodeImages(layout: ClusterLayout, version: string, images: ImageManifest): Promise<string> {
  const diffs = imageDifferences(version, images.images);
  if (diffs.length > 0) throw new Error(`the images built here do not match libs/versions (regenerate with npx nx run k8s-testenv:versions-manifest --mode=write if the change is intended): ${diffs.join('; ')}`);
  await publishImages(artifactsRoot(), version, images.images);
  const overlay = serviceImageOverlay(images);
  for (const i of overlay.images) await publishFile(images.images.find((b) => b.name === i.name)!.archive, join(artifactsRoot(), i.path));
  const file = join(layout.root, IMAGE_OVERLAY_FILE);
  await writeFile(file, renderImageOverlay(overlay), { mode: 0o644 });
  return file;
}

/** Starts the artifact server in the router namespace; resolves once it listens. */
export async function startArtifactServer(layout: ClusterLayout): Promise<{ name: string; hostPort: number; pids: number[] }> {
  const log = join(layout.root, 'artifact-server.log');
  const p = startDetached('artifacts', 'nsenter', [`--net=/run/netns/${NETWORK.routerNamespace}`, process.execPath, '--import', TSX, SERVER, artifactsRoot(), NETWORK.routerIp, String(ARTIFACT_PORT)], log, { cwd: WORKSPACE_ROOT });
  for (let i = 0; i < 300; i++) {
    if ((await readFile(log, 'utf8').catch(() => '')).includes('artifact server listening')) return { name: 'artifacts', hostPort: 0, pids: [p.pid] };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the artifact server did not start (see ${log})`);
}
