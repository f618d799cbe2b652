/**
 * A staging folder that becomes an image's single layer (`COPY rootfs/ /` in the generated
 * Containerfile). Files come from this machine: built binaries, app bundles and the files of
 * installed Debian packages (what `dpkg-query -L` lists), so an image is a function of the
 * machine's packages and our build outputs, with no registry involved (docs/adr/0018).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readlinkSync, symlinkSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';

/** Debian 12 merges /bin, /sbin and /lib* into /usr; package file lists still name the old paths. */
const MERGED_USR = ['bin', 'sbin', 'lib', 'lib64'] as const;

/** A failed staging step (missing package, unreadable file). */
export class StagingError extends Error {}

/** Maps a package path like `/lib/x86_64-linux-gnu/libc.so.6` to its merged-/usr home. */
export function canonicalPath(path: string): string {
  const top = path.split('/')[1] ?? '';
  return (MERGED_USR as readonly string[]).includes(top) ? `/usr${path}` : path;
}

/** Paths of a package that images leave out (documentation). */
function leftOut(path: string): boolean {
  return path.startsWith('/usr/share/doc') || path.startsWith('/usr/share/man') || path.startsWith('/usr/share/lintian');
}

/** Files and symlinks below an unpacked package root, as image paths (sorted), directories and docs left out. */
export function packageTreeFiles(root: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(root, prefix), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = `${prefix}/${e.name}`;
    if (leftOut(path)) continue;
    if (e.isDirectory()) out.push(...packageTreeFiles(root, path));
    else if (e.isFile() || e.isSymbolicLink()) out.push(path);
  }
  return out;
}

/** Files of an installed Debian package (dpkg's list), directories left out. */
export function debianPackageFiles(pkg: string): string[] {
  let out: string;
  try {
    out = execFileSync('dpkg-query', ['-L', pkg], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch {
    throw new StagingError(`Debian package ${pkg} is not installed (apt-get install ${pkg}; tools/scripts/setup.sh installs what the images need)`);
  }
  return out
    .split('\n')
    .map((l) => l.trim())
    .filter((p) => p.startsWith('/') && !leftOut(p))
    .filter((p) => {
      const st = lstatSync(p, { throwIfNoEntry: false });
      return st !== undefined && !st.isDirectory();
    });
}

/** The rootfs of one image under construction. */
export class RootfsStage {
  readonly #files = new Set<string>();

  constructor(readonly dir: string) {
    mkdirSync(join(dir, 'usr'), { recursive: true });
    for (const d of MERGED_USR) {
      mkdirSync(join(dir, 'usr', d), { recursive: true });
      if (!existsSync(join(dir, d))) symlinkSync(`usr/${d}`, join(dir, d));
    }
  }

  /** Image paths staged so far (sorted), for hashing and tests. */
  get files(): string[] {
    return [...this.#files].sort();
  }

  /** Adds a file at `dest` (image path). Hard-linked when possible: staging 100 MB binaries is then free. */
  addFile(src: string, dest: string, mode?: number): void {
    const target = this.#target(dest);
    if (existsSync(target)) return;
    mkdirSync(dirname(target), { recursive: true });
    try {
      if (mode !== undefined) throw new Error('explicit mode: copy');
      linkSync(src, target);
    } catch {
      copyFileSync(src, target);
      if (mode !== undefined) chmodSync(target, mode);
    }
    this.#files.add(canonicalPath(dest));
  }

  /** Adds a symlink `dest -> target` (target kept verbatim). */
  addSymlink(target: string, dest: string): void {
    const path = this.#target(dest);
    if (lstatSync(path, { throwIfNoEntry: false })) return;
    mkdirSync(dirname(path), { recursive: true });
    symlinkSync(target, path);
    this.#files.add(canonicalPath(dest));
  }

  /** Creates an (empty) directory, e.g. `/tmp` with mode 01777. */
  addDir(dest: string, mode = 0o755): void {
    const path = this.#target(dest);
    mkdirSync(path, { recursive: true });
    chmodSync(path, mode);
  }

  /** Adds every file and symlink of the installed Debian packages, at their merged-/usr paths. */
  addDebianPackages(packages: readonly string[]): void {
    for (const pkg of packages) {
      for (const path of debianPackageFiles(pkg)) {
        const st = lstatSync(path);
        if (st.isSymbolicLink()) this.addSymlink(readlinkSync(path), path);
        else if (st.isFile()) this.addFile(path, path);
      }
    }
  }

  /** Adds every file and symlink of an unpacked package root (`dpkg-deb -x`, debian-pins.ts) at its merged-/usr path. */
  addPackageTree(root: string): void {
    for (const path of packageTreeFiles(root)) {
      const abs = join(root, path);
      const st = lstatSync(abs);
      if (st.isSymbolicLink()) this.addSymlink(readlinkSync(abs), path);
      else this.addFile(abs, path);
    }
  }

  #target(dest: string): string {
    if (!dest.startsWith('/')) throw new StagingError(`image path must be absolute: ${dest}`);
    const canonical = canonicalPath(posix.normalize(dest));
    if (canonical.split('/').includes('..')) throw new StagingError(`image path escapes the rootfs: ${dest}`);
    return join(this.dir, canonical);
  }
}
