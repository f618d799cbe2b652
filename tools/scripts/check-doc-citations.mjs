#!/usr/bin/env node
// Checks that code and project docs cite only documents inside the repository: every `docs/….md`
// path mentioned in apps/, libs/, tools/, deploy/ and proto/ exists, every `§` section mark belongs
// to such a docs path (or to an RFC), and nothing cites the outside reference notes (SPEC.md,
// DESIGN.md, notes/). Run by `npm test` (test-all.mjs); exits 1 and lists offenders.
// Usage: node tools/scripts/check-doc-citations.mjs [--root <dir>]
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const rootIdx = process.argv.indexOf('--root');
const root = resolve(rootIdx >= 0 ? process.argv[rootIdx + 1] : join(import.meta.dirname, '..', '..'));
const DIRS = ['apps', 'libs', 'tools', 'deploy', 'proto'];
const EXT = /\.(ts|mts|mjs|js|go|sh|proto|ya?ml|tpl|md)$/;
const SKIP = new Set(['node_modules', 'dist', 'gen', 'testdata', '.cache', '.tools']);

/** Source and doc files under the checked folders. */
function walk(dir, out = []) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name) || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (EXT.test(name)) out.push(p);
  }
  return out;
}

/** Joins comment continuation lines so a citation wrapped over two lines reads as one. */
function normalise(text) {
  return text.replace(/\r?\n[ \t]*(?:\*(?!\/)|\/\/|#)?[ \t]*/g, ' ');
}

const OUTSIDE = /\b(?:SPEC\.md|DESIGN\.md|SPEC §|notes\/[\w-]+\.md)/g;
const DOC_PATH = /\bdocs\/[\w./-]+\.md\b/g;
const OWNER = String.raw`(?:docs/[\w./-]+\.md|RFC \d+)`;
/** A section mark is owned by a docs path (or RFC) shortly before it, possibly after other marks (`§6-§8`). */
const SECTION_OWNER = new RegExp(`${OWNER}(?:[^§]{0,40}|\\s*(?:§[\\w.]+\\s*(?:[-–,]|and)\\s*)+)$`);
const SELF = relative(root, import.meta.filename);

const problems = [];
for (const file of DIRS.flatMap((d) => walk(join(root, d)))) {
  const rel = relative(root, file);
  if (rel === SELF) continue;
  const text = normalise(readFileSync(file, 'utf8'));
  for (const m of text.matchAll(OUTSIDE)) problems.push(`${rel}: cites ${m[0]}, which is not in the repository`);
  for (const m of text.matchAll(DOC_PATH)) {
    if (!existsSync(join(root, m[0]))) problems.push(`${rel}: cites ${m[0]}, which does not exist`);
  }
  for (const m of text.matchAll(/§/g)) {
    const before = text.slice(Math.max(0, m.index - 120), m.index);
    if (!SECTION_OWNER.test(before)) problems.push(`${rel}: "${text.slice(Math.max(0, m.index - 40), m.index + 10).trim()}" is a section mark without a docs/ file`);
  }
}
if (problems.length > 0) {
  console.error(`check-doc-citations: ${problems.length} problem(s)\n${problems.join('\n')}`);
  process.exit(1);
}
console.log('check-doc-citations: every citation resolves to a file under docs/');
