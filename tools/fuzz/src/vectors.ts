/**
 * The real vectors of `testdata/` (testdata/README.md), read once. `used` records which files
 * seeded a target, so the gate can prove that every vector is fuzzed.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { WORKSPACE_ROOT } from '@asterism/testing';

const DIR = join(WORKSPACE_ROOT, 'testdata');
const used = new Set<string>();

/** The bytes of `testdata/<path>`, marked as used. */
export function vector(path: string): Buffer {
  used.add(path);
  return readFileSync(join(DIR, path));
}

/** The text of `testdata/<path>`. */
export function vectorText(path: string): string {
  return vector(path).toString('utf8');
}

/** Every vector file under testdata/ (README excluded), as paths relative to it. */
export function allVectors(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((n) => {
      const p = join(dir, n);
      return statSync(p).isDirectory() ? walk(p) : [relative(DIR, p)];
    });
  return walk(DIR)
    .filter((p) => !p.endsWith('README.md'))
    .sort();
}

/** The vectors that seeded a target so far. */
export function usedVectors(): string[] {
  return [...used].sort();
}
