/**
 * A baseline checkout for before/after comparisons inside one benchmark run: the sources of a git
 * ref (`git archive`, the repository itself is not touched) in a temporary folder, wired to this
 * checkout's npm packages, so that `bundleApp(app, { root })` builds the app as it was at that ref.
 * The workspace packages (`@asterism/*`) resolve to the baseline's own sources; every other package
 * is this checkout's (same lockfile assumed: compare refs whose dependencies agree).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '@asterism/deploy';

/** Workspace folders whose sources the apps are bundled from. */
const SOURCE_DIRS = ['apps', 'libs', 'tools', 'deploy', 'package.json', 'tsconfig.base.json'];

/** Extracts `ref` into a new temporary folder and links node_modules; returns the folder. */
export function baselineCheckout(ref: string): string {
  const root = mkdtempSync(join(tmpdir(), 'bench-baseline-'));
  const sources = SOURCE_DIRS.filter((d) => existsSync(join(REPO_ROOT, d)));
  const tar = execFileSync('git', ['-C', REPO_ROOT, 'archive', '--format=tar', ref, ...sources], { maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', root], { input: tar });
  linkPackages(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'));
  // Packages npm installed below a project (a second version of one dependency).
  for (const group of ['apps', 'libs', 'tools']) {
    for (const project of readdirSync(join(REPO_ROOT, group))) {
      const nested = join(REPO_ROOT, group, project, 'node_modules');
      if (existsSync(nested) && existsSync(join(root, group, project))) symlinkSync(nested, join(root, group, project, 'node_modules'));
    }
  }
  return root;
}

/** `to/<entry>` -> `from/<entry>` for every package; `@asterism/*` keeps its relative links (into the baseline). */
function linkPackages(from: string, to: string): void {
  mkdirSync(join(to, '@asterism'), { recursive: true });
  for (const entry of readdirSync(from)) {
    if (entry === '@asterism') {
      for (const pkg of readdirSync(join(from, entry))) symlinkSync(readlinkSync(join(from, entry, pkg)), join(to, entry, pkg));
    } else {
      symlinkSync(join(from, entry), join(to, entry));
    }
  }
}
