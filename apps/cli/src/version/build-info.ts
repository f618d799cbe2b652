/**
 * What this build of the CLI is: its version (apps/cli/package.json) and the git commit it was
 * built from. A bundle (tools/release) has the commit stamped in at build time through esbuild's
 * `define`, so the executable needs no checkout; run from the sources (tsx) it asks git.
 */
import { execFileSync } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import pkg from '../../package.json' with { type: 'json' };

/** Set by the bundler (tools/release/src/cli-bundle.ts); absent when running from the sources. */
declare const __ASTERISM_BUILD_COMMIT__: string | undefined;

/** Version and commit of this CLI. */
export interface BuildInfo {
  /** `version` of apps/cli/package.json, e.g. `0.1.0`. */
  version: string;
  /** 40 hex digits, `-dirty` appended when the tree had changes; `unknown` outside a git checkout. */
  commit: string;
  /** `bundle` for a built CLI (bundle or executable), `source` under tsx. */
  build: 'bundle' | 'source';
}

/** The commit of the checkout `dir` is in (`-dirty` when files differ from it), or `unknown`. */
export function gitCommit(dir: string): string {
  try {
    const git = (args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const head = git(['rev-parse', 'HEAD']);
    return git(['status', '--porcelain', '--untracked-files=no']) === '' ? head : `${head}-dirty`;
  } catch {
    return 'unknown';
  }
}

/** Version and commit of the running CLI. */
export function buildInfo(): BuildInfo {
  if (typeof __ASTERISM_BUILD_COMMIT__ === 'string') return { version: pkg.version, commit: __ASTERISM_BUILD_COMMIT__, build: 'bundle' };
  return { version: pkg.version, commit: gitCommit(dirname(fileURLToPath(import.meta.url))), build: 'source' };
}
