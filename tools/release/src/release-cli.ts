/**
 * `bash tools/scripts/release.sh [--out <dir>] [--cli-only] [--no-cache]`: the release build
 * (release.ts) into `dist/release/` (default); prints every artifact with its SHA-256. Also copies
 * the executable to `dist/asterism` (the path the README's install step uses) and the ESM bundle
 * to `apps/cli/dist/asterism.mjs` (what apps/cli's `bin` runs).
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '@asterism/deploy';
import { buildRelease } from './release.js';

const USAGE = `Usage: bash tools/scripts/release.sh [--out <dir>] [--cli-only] [--no-cache]

  --out <dir>   release folder (default dist/release; emptied first)
  --cli-only    only the asterism executable (also copied to dist/asterism)
  --no-cache    build the executable even when the cache has one for the same inputs`;

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ strict: true, options: { out: { type: 'string' }, 'cli-only': { type: 'boolean' }, 'no-cache': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } }));
  } catch (err) {
    process.stderr.write(`release: ${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const outDir = resolve(values.out ?? join(REPO_ROOT, 'dist', 'release'));
  const started = Date.now();
  const m = await buildRelease({ outDir, cliOnly: values['cli-only'] === true, ...(values['no-cache'] ? { seaCache: null } : {}), progress: (l) => process.stderr.write(`release: ${l}\n`) });
  const exe = m.artifacts.find((a) => a.kind === 'cli')!;
  copyFileSync(join(outDir, exe.path), join(REPO_ROOT, 'dist', 'asterism'));
  const bundle = m.artifacts.find((a) => a.kind === 'cli-bundle')!;
  mkdirSync(join(REPO_ROOT, 'apps', 'cli', 'dist'), { recursive: true });
  copyFileSync(join(outDir, bundle.path), join(REPO_ROOT, 'apps', 'cli', 'dist', 'asterism.mjs'));
  for (const a of m.artifacts) process.stdout.write(`${a.sha256}  ${a.path}${a.digest ? `  (${a.ref}@${a.digest})` : ''}\n`);
  process.stderr.write(`release: ${outDir}/manifest.json and SHA256SUMS; dist/asterism; apps/cli/dist/asterism.mjs (node_modules/.bin/asterism); ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return 0;
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    process.stderr.write(`release: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
