/**
 * Pinned Debian packages for images whose bytes the versions manifest records (kube-proxy,
 * docs/adr/0034-components-by-version.md): exact versions and .deb SHA-256s are checked in
 * (`debian-pins.json`); the .debs are fetched with `apt-get download` from the package archive the
 * machine already uses, checked by hash, and unpacked with `dpkg-deb -x` into a cache. So the image
 * no longer depends on what the build machine has installed.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import PINS from './debian-pins.json' with { type: 'json' };
import { StagingError } from './rootfs.js';

const run = promisify(execFile);

/** One pinned package. */
export interface DebianPin {
  version: string;
  architecture: string;
  /** Lower-case hex SHA-256 of the .deb. */
  sha256: string;
}

/** The checked-in pins, by package name. */
export const DEBIAN_PINS: Readonly<Record<string, DebianPin>> = PINS;

/** Where fetched and unpacked packages are kept (shared by every checkout of the machine). */
export function debianCacheDir(): string {
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'asterism', 'debs');
}

async function sha256(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** The pin of `pkg`, or a StagingError naming the file to edit. */
export function pinOf(pkg: string, pins: Readonly<Record<string, DebianPin>> = DEBIAN_PINS): DebianPin {
  const pin = pins[pkg];
  if (!pin) throw new StagingError(`Debian package ${pkg} has no pin in deploy/src/images/debian-pins.json`);
  return pin;
}

/**
 * The unpacked root of the pinned `pkg` (fetched, checked and unpacked when not cached). A .deb
 * whose hash differs from the pin is an error naming both hashes; nothing is unpacked from it.
 */
export async function pinnedPackageRoot(pkg: string, cacheDir = debianCacheDir(), pins = DEBIAN_PINS): Promise<string> {
  const pin = pinOf(pkg, pins);
  const dir = join(cacheDir, `${pkg}_${pin.version.replace(/:/g, '%3a')}_${pin.architecture}_${pin.sha256.slice(0, 16)}`);
  const root = join(dir, 'root');
  if (existsSync(join(dir, 'complete'))) return root;
  await mkdir(cacheDir, { recursive: true });
  const tmp = await mkdtemp(join(cacheDir, `.${pkg}-`));
  try {
    await run('apt-get', ['download', `${pkg}:${pin.architecture}=${pin.version}`], { cwd: tmp, timeout: 300_000 }).catch((err: unknown) => {
      throw new StagingError(`apt-get download ${pkg}=${pin.version} failed (is the version still in the package archive? update deploy/src/images/debian-pins.json): ${(err as { stderr?: string }).stderr?.trim().split('\n').pop() ?? ''}`);
    });
    const debs = (await readdir(tmp)).filter((f) => f.endsWith('.deb'));
    if (debs.length !== 1) throw new StagingError(`apt-get download ${pkg} gave ${debs.length} .deb files`);
    const got = await sha256(join(tmp, debs[0]!));
    if (got !== pin.sha256) throw new StagingError(`Debian package ${pkg} ${pin.version}: .deb has sha256 ${got}, pinned ${pin.sha256}`);
    await run('dpkg-deb', ['-x', join(tmp, debs[0]!), join(tmp, 'root')], { timeout: 120_000 });
    await writeFile(join(tmp, 'complete'), `${debs[0]}\n`);
    await rm(dir, { recursive: true, force: true });
    // Another build may have won the race: its copy is as good (same checked .deb).
    await rename(tmp, dir).catch((err: unknown) => {
      if (!existsSync(join(dir, 'complete'))) throw err;
    });
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return root;
}

/** Fetches (when needed) every pinned package of `packages`; returns their unpacked roots by name. */
export async function pinnedPackageRoots(packages: Iterable<string>, cacheDir = debianCacheDir()): Promise<Record<string, string>> {
  const roots: Record<string, string> = {};
  for (const pkg of new Set(packages)) roots[pkg] = await pinnedPackageRoot(pkg, cacheDir);
  return roots;
}
