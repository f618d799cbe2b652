/**
 * Installs the Kubernetes components of an init request or a join ticket before kubeadm runs
 * (docs/protocol/components.md). Two stages, so a bad artifact leaves the node unchanged:
 *   1. fetch every artifact that is not installed yet into a private staging folder and check its
 *      SHA-256; one mismatch or unreachable artifact ends the install with nothing installed;
 *   2. only then extract archives and move every file into place atomically (a temporary file in
 *      the target folder, then rename), recording what an archive installed so the next boot can
 *      skip it.
 * Nothing is extracted or executed before its hash matched. Image components (an install path below
 * /run/state/images) are imported into containerd instead, checked by digest before and after the
 * import (./image-import.ts); they go in after every file, so a node never starts a Kubernetes
 * binary whose images were refused.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '@asterism/logger';
import { displayUrl, fetchArtifact, type FetchLimits } from './artifact-fetcher.js';
import { ComponentInstallError, parseComponents, type ComponentSpec, type WireComponentLike } from './component-spec.js';
import { sha256OfFile } from './file-hash.js';
import { checkArchive, imagePresent, importImage } from './image-import.js';
import type { ImageStore } from './image-store.js';

/** Options of {@link ComponentInstaller}. */
export interface ComponentInstallerOptions {
  logger: Logger;
  /** Re-bases the absolute install paths (tests and the local cluster give each node its own root). */
  resolve?: (path: string) => string;
  limits?: FetchLimits;
  /** Where artifacts are staged before they are checked (default: the OS temp folder). */
  stagingParent?: string;
  /** containerd's image store; required when a list names images. */
  images?: ImageStore;
}

/** What an install did, by component name. */
export interface InstallReport {
  installed: string[];
  skipped: string[];
}

/** An artifact fetched and checked, waiting to be put in place. */
interface Staged {
  spec: ComponentSpec;
  file: string;
  sha256: string;
}

/** The record an extracted archive leaves in its install folder: its hash and each file's hash. */
interface ArchiveRecord {
  hash: string;
  files: Record<string, string>;
}

const run = promisify(execFile);

/** Fetches, checks and installs component lists (see the module comment). */
export class ComponentInstaller {
  constructor(private readonly o: ComponentInstallerOptions) {}

  /** Installs `list` (validated first: an invalid entry installs nothing). */
  async install(list: readonly WireComponentLike[], signal?: AbortSignal): Promise<InstallReport> {
    const specs = parseComponents(list);
    const firstImage = specs.find((s) => s.image);
    if (firstImage && !this.o.images) {
      throw new ComponentInstallError('IMAGE_IMPORT_FAILED', `component ${firstImage.name}: this node has no container runtime to import images into; nothing was installed`, { details: { component: firstImage.name } });
    }
    const started = performance.now();
    const report: InstallReport = { installed: [], skipped: [] };
    const todo: ComponentSpec[] = [];
    for (const s of specs) {
      if (await this.isInstalled(s)) report.skipped.push(s.name);
      else todo.push(s);
    }
    this.o.logger.info('installed components checked', { toInstall: todo.map((s) => s.name), durationMs: Math.round(performance.now() - started) });
    if (todo.length === 0) return this.done(report, started);
    const staging = await mkdtemp(join(this.o.stagingParent ?? tmpdir(), 'asterism-components-'));
    try {
      const staged: Staged[] = [];
      for (const spec of todo) staged.push(await this.fetchAndCheck(spec, staging, signal));
      // Files first, then images (stable sort: the list's order otherwise).
      staged.sort((a, b) => Number(a.spec.image !== undefined) - Number(b.spec.image !== undefined));
      for (const s of staged) {
        await this.put(s, staging);
        report.installed.push(s.spec.name);
      }
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
    return this.done(report, started);
  }

  private done(report: InstallReport, started: number): InstallReport {
    this.o.logger.info('Kubernetes components ready', { installed: report.installed, skipped: report.skipped, durationMs: Math.round(performance.now() - started) });
    return report;
  }

  private real(path: string): string {
    return this.o.resolve ? this.o.resolve(path) : path;
  }

  /** Stage 1: the artifact into the staging folder; its hash must be the component's. */
  private async fetchAndCheck(spec: ComponentSpec, staging: string, signal?: AbortSignal): Promise<Staged> {
    const file = join(staging, `${spec.name}-${randomBytes(4).toString('hex')}`);
    const started = performance.now();
    const got = await fetchArtifact(spec, file, this.o.limits, signal);
    if (spec.sha256 !== undefined && got.sha256 !== spec.sha256) {
      await rm(file, { force: true });
      throw new ComponentInstallError(
        'HASH_MISMATCH',
        `component ${spec.name}: artifact ${displayUrl(spec.url)} has hash sha256:${got.sha256}, expected sha256:${spec.sha256}; nothing was installed`,
        { details: { component: spec.name, url: displayUrl(spec.url), expected: `sha256:${spec.sha256}`, actual: `sha256:${got.sha256}` } },
      );
    }
    if (spec.image) await checkArchive(spec, spec.image, file);
    this.o.logger.info('component artifact fetched and verified', { component: spec.name, url: displayUrl(spec.url), bytes: got.bytes, durationMs: Math.round(performance.now() - started) });
    return { spec, file, sha256: got.sha256 };
  }

  /** Stage 2: one checked artifact into place. */
  private async put(s: Staged, staging: string): Promise<void> {
    const started = performance.now();
    try {
      if (s.spec.image) await importImage(this.o.images!, s.spec, s.spec.image, s.file);
      else if (s.spec.extract) await this.putArchive(s, staging);
      else await atomicInstall(s.file, this.real(s.spec.installPath));
    } catch (err) {
      if (err instanceof ComponentInstallError) throw err;
      throw new ComponentInstallError('INSTALL_FAILED', `component ${s.spec.name}: installing into ${s.spec.installPath}: ${(err as Error).message}`, {
        details: { component: s.spec.name },
        cause: err,
      });
    }
    this.o.logger.info('component installed', { component: s.spec.name, durationMs: Math.round(performance.now() - started) });
  }

  /** Extracts a checked archive into staging, then moves each of its files into the install folder. */
  private async putArchive(s: Staged, staging: string): Promise<void> {
    const out = join(staging, `${s.spec.name}-extracted`);
    await mkdir(out);
    try {
      await run('tar', ['-xzf', s.file, '-C', out, '--no-same-owner'], { timeout: 120_000 });
    } catch (err) {
      throw new ComponentInstallError('EXTRACT_FAILED', `component ${s.spec.name}: extracting: ${(err as Error).message.split('\n')[0]}`, { details: { component: s.spec.name }, cause: err });
    }
    const target = this.real(s.spec.installPath);
    const record: ArchiveRecord = { hash: `sha256:${s.sha256}`, files: {} };
    for (const entry of await readdir(out, { withFileTypes: true })) {
      if (!entry.isFile()) throw new ComponentInstallError('EXTRACT_FAILED', `component ${s.spec.name}: archive entry ${entry.name} is not a regular file`, { details: { component: s.spec.name } });
      record.files[entry.name] = `sha256:${await sha256OfFile(join(out, entry.name))}`;
    }
    for (const name of Object.keys(record.files)) await atomicInstall(join(out, name), join(target, name));
    await writeFile(join(target, recordName(s.spec)), `${JSON.stringify(record)}\n`, { mode: 0o644 });
  }

  /** Already there with the same content: a file with the hash, or an archive whose record and files all match. */
  private async isInstalled(spec: ComponentSpec): Promise<boolean> {
    if (spec.sha256 === undefined) return false;
    if (spec.image) {
      return imagePresent(this.o.images!, spec.image).catch((err: unknown) => {
        throw new ComponentInstallError('IMAGE_IMPORT_FAILED', `component ${spec.name}: reading containerd's images: ${(err as Error).message.split('\n')[0]}; nothing was installed`, { details: { component: spec.name }, cause: err });
      });
    }
    const path = this.real(spec.installPath);
    try {
      if (!spec.extract) return (await sha256OfFile(path)) === spec.sha256;
      const record = JSON.parse(await readFile(join(path, recordName(spec)), 'utf8')) as ArchiveRecord;
      if (record.hash !== `sha256:${spec.sha256}`) return false;
      for (const [name, hash] of Object.entries(record.files)) if (`sha256:${await sha256OfFile(join(path, name))}` !== hash) return false;
      return true;
    } catch {
      return false;
    }
  }
}

/** The file in an install folder recording what an archive put there. */
function recordName(spec: ComponentSpec): string {
  return `.asterism-component-${spec.name}.json`;
}

/** Copies `from` next to `to` under a temporary name, makes it executable, then renames it over `to`. */
async function atomicInstall(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  const tmp = join(dirname(to), `.${basename(to)}.asterism-${randomBytes(4).toString('hex')}`);
  try {
    await copyFile(from, tmp);
    await chmod(tmp, 0o755);
    if ((await stat(tmp)).size !== (await stat(from)).size) throw new Error(`short copy to ${tmp}`);
    await rename(tmp, to);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
