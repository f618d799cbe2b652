/**
 * A Node.js single executable application (docs/adr/0032): the CommonJS bundle of a program is
 * turned into a preparation blob (`node --experimental-sea-config`) and injected into a copy of
 * the Node binary with postject, so the result runs with no Node.js installed and no checkout.
 * No V8 code cache and no snapshot: both depend on the build run, and without them the same
 * inputs give the same bytes.
 *
 * Builds are cached by a hash of every input (script, Node binary, postject version, config), so
 * tests and repeated releases build the executable once.
 */
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { sha256File, sha256Parts } from './hashing.js';

const run = promisify(execFile);
const require = createRequire(import.meta.url);

/** The fuse Node's binary carries for single executable applications (Node 20 documentation). */
export const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
/** The script's name inside the executable (stack traces show `asterism.cjs:<line>`). */
const SCRIPT_NAME = 'asterism.cjs';
/** The ELF note the preparation blob goes into. */
export const SEA_RESOURCE = 'NODE_SEA_BLOB';

/** Options of {@link buildSea}. */
export interface SeaOptions {
  /** The CommonJS script to embed (deploy's bundler, `format: 'cjs'`). */
  script: string;
  /** Where the executable goes (mode 0755). */
  output: string;
  /** The Node binary to copy (default: the running one). */
  nodeBinary?: string;
  /** Cache folder (default `~/.cache/asterism/sea`); `null` always builds. */
  cacheDir?: string | null;
}

/** A built (or cached) executable. */
export interface SeaResult {
  path: string;
  sha256: string;
  bytes: number;
  /** Hash of every input: the cache key. */
  inputHash: string;
  cached: boolean;
  ms: number;
}

/** Default cache folder (`$XDG_CACHE_HOME` or `~/.cache`, then `asterism/sea`). */
export function defaultSeaCache(): string {
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'asterism', 'sea');
}

function seaConfig(script: string, blob: string): string {
  return `${JSON.stringify({ main: script, output: blob, disableExperimentalSEAWarning: true, useSnapshot: false, useCodeCache: false }, null, 2)}\n`;
}

/** The cache key: script bytes, Node binary, postject version and the config. */
async function inputHash(script: string, nodeBinary: string): Promise<string> {
  const postject = (require('postject/package.json') as { version: string }).version;
  return sha256Parts(['asterism-sea-v2', readFileSync(script), await sha256File(nodeBinary), postject, seaConfig(SCRIPT_NAME, 'sea.blob')]);
}

/**
 * Blob + copy of Node + injection, in `work`; returns the executable's path. The blob records
 * the script's path as given (it names the script in stack traces), so the script is copied to
 * `asterism.cjs` in `work` and named relatively: the build folder does not change the bytes.
 */
async function build(script: string, nodeBinary: string, work: string): Promise<string> {
  copyFileSync(script, join(work, SCRIPT_NAME));
  writeFileSync(join(work, 'sea-config.json'), seaConfig(SCRIPT_NAME, 'sea.blob'));
  await run(nodeBinary, ['--experimental-sea-config', 'sea-config.json'], { cwd: work });
  const blob = join(work, 'sea.blob');
  const exe = join(work, 'asterism');
  copyFileSync(nodeBinary, exe);
  chmodSync(exe, 0o755);
  try {
    await run(process.execPath, [require.resolve('postject/dist/cli.js'), exe, SEA_RESOURCE, blob, '--sentinel-fuse', SEA_FUSE], { maxBuffer: 16 << 20 });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`postject failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
  return exe;
}

/** Builds the executable of `script`, or copies it from the cache when every input is unchanged. */
export async function buildSea(o: SeaOptions): Promise<SeaResult> {
  const started = Date.now();
  const nodeBinary = o.nodeBinary ?? process.execPath;
  const key = await inputHash(o.script, nodeBinary);
  const cacheDir = o.cacheDir === undefined ? defaultSeaCache() : o.cacheDir;
  const cached = cacheDir === null ? undefined : join(cacheDir, key, 'asterism');
  const hit = cached !== undefined && existsSync(cached);
  mkdirSync(dirname(o.output), { recursive: true });
  if (hit) {
    copyFileSync(cached, o.output);
  } else {
    const work = mkdtempSync(join(tmpdir(), 'asterism-sea-'));
    try {
      const exe = await build(o.script, nodeBinary, work);
      if (cached !== undefined) {
        mkdirSync(dirname(cached), { recursive: true });
        const tmp = `${cached}.${process.pid}.tmp`;
        copyFileSync(exe, tmp);
        renameSync(tmp, cached);
      }
      copyFileSync(exe, o.output);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  chmodSync(o.output, 0o755);
  return { path: o.output, sha256: await sha256File(o.output), bytes: statSync(o.output).size, inputHash: key, cached: hit, ms: Date.now() - started };
}
