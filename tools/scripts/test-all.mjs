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
if (existsSync(resultsDir)) {
  for (const f of readdirSync(resultsDir).filter((n) => n.endsWith('.tap'))) {
    const tap = readFileSync(join(resultsDir, f), 'utf8');
    pass += Number(/^# pass (\d+)$/m.exec(tap)?.[1] ?? 0);
    fail += Number(/^# fail (\d+)$/m.exec(tap)?.[1] ?? 0);
    skipped += Number(/^# skipped (\d+)$/m.exec(tap)?.[1] ?? 0);
  }
}
const secs = ((Date.now() - started) / 1000).toFixed(0);
console.log(`\ntest-all finished in ${secs}s (nx exit code ${nx.status})`);
console.log(`tests: ${pass} passed, ${fail} failed, ${skipped} skipped`);
process.exit(nx.status === 0 && fail === 0 && citations.status === 0 ? 0 : 1);
