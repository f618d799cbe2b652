#!/usr/bin/env node
// Checks that code and project docs cite only documents inside the repository: every `docs/….md`
// path mentioned in apps/, libs/, tools/, deploy/, proto/, docs/ and testdata/ exists, every `§`
// section mark belongs to such a docs path (or to an RFC; inside a docs/ file a bare mark means a
// section of that file), and nothing cites the outside reference notes (SPEC.md, DESIGN.md,
// notes/). Run by `npm test` (test-all.mjs); exits 1 and lists offenders.
// Usage: node tools/scripts/check-doc-citations.mjs [--root <dir>] [--fix]
//   --fix  rewrites citations of the reference notes' sections (`SPEC.md §9.2`) to the docs file
//          that holds those facts (see FILE_OF_SECTION), then checks.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const rootIdx = process.argv.indexOf('--root');
const root = resolve(rootIdx >= 0 ? process.argv[rootIdx + 1] : join(import.meta.dirname, '..', '..'));
const DIRS = ['apps', 'libs', 'tools', 'deploy', 'proto', 'docs', 'testdata'];
/** A docs/ file may refer to its own sections with a bare `§2`. */
const SELF_SECTIONS = /^docs\//;
const EXT = /\.(ts|mts|mjs|js|go|sh|proto|ya?ml|tpl|md)$/;
/** Nested testdata folders hold vectors, not docs; the top-level testdata/ README is checked. */
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

/** Which docs file holds the facts of a section of the reference notes (for --fix). */
function fileOfSection(section) {
  if (section.startsWith('Appendix A')) return 'vtpm-attestation.md';
  if (section.startsWith('Appendix B')) return 'bootstrapper.md';
  const [major, minor] = section.replace('§', '').trim().split('.');
  const byMinor = (table, fallback) => table[minor] ?? fallback;
  const file = {
    0: 'constants.md',
    1: 'grpc-apis.md',
    2: 'key-hierarchy.md',
    3: 'attestation-variants.md',
    4: byMinor({ 10: 'attestation-variants.md' }, 'atls.md'),
    5: byMinor({ 3: 'measurements.md', 5: 'sev-snp.md', 6: 'attestation-config.md', 7: 'tdx-dcap.md', 8: 'node-lock.md', 9: 'attestation-config.md' }, 'vtpm-attestation.md'),
    7: 'node-lock.md',
    8: byMinor({ 5: 'kubernetes.md', 8: 'metadata.md', 9: 'metadata.md' }, 'bootstrapper.md'),
    9: 'join-ticket.md',
    10: 'key-hierarchy.md',
    11: 'helm.md',
    13: 'vtpm-attestation.md',
    14: byMinor({ 1: 'recovery.md' }, 'verification.md'),
  }[major];
  return file ? `docs/protocol/${file}` : undefined;
}

const SECTION = String.raw`(?:§\s?[\d.]*\d|Appendix [AB])`;
const CITATION = new RegExp(String.raw`SPEC(?:\.md)?(?:\s|\n\s*\*\s*|\n\s*//\s*)+(${SECTION}(?:\s*(?:,|-|–|and)\s*${SECTION})*)`, 'g');

/** Rewrites `SPEC.md §x` citations to docs paths; sections without a home stay for the check to report. */
function fix(text) {
  return text.replace(CITATION, (all, sections) => {
    const files = [...new Set(sections.match(new RegExp(SECTION, 'g')).map(fileOfSection))];
    return files.includes(undefined) ? all : files.join(', ');
  });
}

const problems = [];
for (const file of DIRS.flatMap((d) => walk(join(root, d)))) {
  const rel = relative(root, file);
  if (rel === SELF) continue;
  if (process.argv.includes('--fix')) {
    const raw = readFileSync(file, 'utf8');
    const fixed = fix(raw);
    if (fixed !== raw) writeFileSync(file, fixed);
  }
  const text = normalise(readFileSync(file, 'utf8'));
  for (const m of text.matchAll(OUTSIDE)) problems.push(`${rel}: cites ${m[0]}, which is not in the repository`);
  for (const m of text.matchAll(DOC_PATH)) {
    if (!existsSync(join(root, m[0]))) problems.push(`${rel}: cites ${m[0]}, which does not exist`);
  }
  for (const m of text.matchAll(/§/g)) {
    if (SELF_SECTIONS.test(rel) && !/(?:SPEC|DESIGN)(?:\.md)?\s*$/.test(text.slice(Math.max(0, m.index - 12), m.index))) continue;
    const before = text.slice(Math.max(0, m.index - 120), m.index);
    if (!SECTION_OWNER.test(before)) problems.push(`${rel}: "${text.slice(Math.max(0, m.index - 40), m.index + 10).trim()}" is a section mark without a docs/ file`);
  }
}
if (problems.length > 0) {
  console.error(`check-doc-citations: ${problems.length} problem(s)\n${problems.join('\n')}`);
  process.exit(1);
}
console.log('check-doc-citations: every citation resolves to a file under docs/');
