#!/usr/bin/env node
// The whole test job: proto drift check, type checks, lint and every project's tests
// (unit + integration against real components), then one summary line over all projects.
// Usage: npm test   (extra args are passed to `nx run-many`, e.g. `npm test -- --projects=crypto`)
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

const workspace = resolve(import.meta.dirname, '..', '..');
const resultsDir = join(workspace, '.test-results');
rmSync(resultsDir, { recursive: true, force: true });

const env = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false' };
const started = Date.now();
// Repository-wide: comments and project docs cite only files under docs/.
const citations = spawnSync(process.execPath, [join(workspace, 'tools', 'scripts', 'check-doc-citations.mjs')], { cwd: workspace, stdio: 'inherit' });
const nx = spawnSync(
  'npx',
  ['nx', 'run-many', '-t', 'check-drift', 'typecheck', 'lint', 'test', '--outputStyle=stream', ...process.argv.slice(2)],
  { cwd: workspace, stdio: 'inherit', env },
);

let pass = 0;
let fail = 0;
let skipped = 0;
/** `<project>: <test> (<first error line>)` for every failed test, printed last so a cut log still names them. */
const failures = [];
if (existsSync(resultsDir)) {
  for (const f of readdirSync(resultsDir).filter((n) => n.endsWith('.tap'))) {
    const tap = readFileSync(join(resultsDir, f), 'utf8');
    pass += Number(/^# pass (\d+)$/m.exec(tap)?.[1] ?? 0);
    fail += Number(/^# fail (\d+)$/m.exec(tap)?.[1] ?? 0);
    skipped += Number(/^# skipped (\d+)$/m.exec(tap)?.[1] ?? 0);
    failures.push(...failedTests(f.replace(/\.tap$/, ''), tap));
  }
}
const secs = ((Date.now() - started) / 1000).toFixed(0);
console.log(`\ntest-all finished in ${secs}s (nx exit code ${nx.status})`);
for (const line of failures) console.log(`failed: ${line}`);
console.log(`tests: ${pass} passed, ${fail} failed, ${skipped} skipped`);

/** The failed tests of one TAP report, innermost first, each with the first line of its error. */
function failedTests(project, tap) {
  const lines = tap.split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s*)not ok \d+ - (.*)$/.exec(lines[i]);
    if (!m) continue;
    let error = '';
    for (let j = i + 1; j < lines.length && j < i + 40; j++) {
      const e = /^\s*error: (.*)$/.exec(lines[j]);
      if (e) {
        const value = /^[|>]-?$/.test(e[1]) ? (lines[j + 1] ?? '').trim() : e[1];
        error = value.replace(/^'(.*)'$/, '$1');
        break;
      }
      if (/^\s*(not )?ok \d+ - /.test(lines[j])) break;
    }
    out.push(`${project}: ${m[2]}${error ? ` (${error.slice(0, 200)})` : ''}`);
  }
  return out;
}

process.exit(nx.status === 0 && fail === 0 && citations.status === 0 ? 0 : 1);
