#!/usr/bin/env node
// Runs one project's tests with node's built-in test runner (TypeScript via tsx).
// Usage: node tools/scripts/run-tests.mjs <projectRoot> [--unit | --int] [--only <substring>]
//   --unit  only *.spec.ts files that are not *.int.spec.ts (fast, no real components needed)
//   --int   only *.int.spec.ts files (real components: swtpm, kube-apiserver, helm, ...)
// A TAP copy of the results lands in .test-results/<project>.tap for the summary in test-all.mjs.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';

const args = process.argv.slice(2);
const root = args.find((a) => !a.startsWith('--'));
if (!root) {
  console.error('usage: run-tests.mjs <projectRoot> [--unit|--int] [--only <substring>]');
  process.exit(2);
}
const mode = args.includes('--unit') ? 'unit' : args.includes('--int') ? 'int' : 'all';
const onlyIdx = args.indexOf('--only');
const only = onlyIdx >= 0 ? args[onlyIdx + 1] : undefined;
const workspace = resolve(import.meta.dirname, '..', '..');
const projectDir = resolve(workspace, root);
if (!existsSync(projectDir)) {
  console.error(`run-tests.mjs: no project folder ${relative(workspace, projectDir)} (give a project root such as tools/interop or apps/keyservice)`);
  process.exit(2);
}

/** Recursively lists spec files, skipping dependency and output folders. */
function findSpecs(dir) {
  const out = [];
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist' || entry.startsWith('.')) continue;
    const p = join(dir, entry);
    if (statSync(p).isDirectory()) out.push(...findSpecs(p));
    else if (entry.endsWith('.spec.ts')) out.push(p);
  }
  return out;
}

let files = findSpecs(projectDir).sort();
if (mode === 'unit') files = files.filter((f) => !f.endsWith('.int.spec.ts'));
if (mode === 'int') files = files.filter((f) => f.endsWith('.int.spec.ts'));
if (only) files = files.filter((f) => f.includes(only));
if (files.length === 0) {
  if (mode === 'all' && !only) {
    console.error(`run-tests: no *.spec.ts files under ${root}: every project must have tests`);
    process.exit(1);
  }
  console.log(`run-tests: no ${mode} tests under ${root}`);
  process.exit(0);
}

const resultsDir = join(workspace, '.test-results');
mkdirSync(resultsDir, { recursive: true });
const name = basename(projectDir) + (mode === 'all' ? '' : `.${mode}`);
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
// Child processes started through @asterism/k8s-controlplane (and other supervised helpers)
// record their pids here; anything still alive after the tests is killed and reported.
const pidDir = mkdtempSync(join(tmpdir(), 'asterism-pids-'));
// A test that waits forever (a leaked connection, a server that never closes) must fail with its
// name instead of hanging CI until the job's limit: every test, and every test file, gets at most
// TEST_TIMEOUT_MS. The slowest file, the real-node suite (tools/local-cluster
// real-cluster.int.spec.ts), takes 9-21 min depending on its scenarios and the load: 30 min.
// (No --test-force-exit: it cuts the TAP reporter's summary that test-all counts.)
const testTimeoutMs = process.env.TEST_TIMEOUT_MS ?? '1800000';
const res = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${testTimeoutMs}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=tap',
    `--test-reporter-destination=${join(resultsDir, `${name}.tap`)}`,
    ...files.map((f) => relative(workspace, f)),
  ],
  { cwd: workspace, stdio: 'inherit', env: { ...process.env, ASTERISM_WORKSPACE: workspace, ASTERISM_PID_DIR: pidDir } },
);
const leftovers = existsSync(pidDir) ? readdirSync(pidDir) : [];
let killed = 0;
for (const pid of leftovers) {
  try {
    process.kill(Number(pid), 'SIGKILL');
    killed++;
  } catch {
    /* already gone */
  }
}
rmSync(pidDir, { recursive: true, force: true });
if (killed > 0) {
  console.error(`run-tests: ${killed} process(es) started by the tests were still running and have been killed: ${leftovers.join(', ')}`);
  process.exit(1);
}
if (res.error) {
  console.error(`run-tests: could not start node: ${res.error.message}`);
  process.exit(1);
}
if (!existsSync(join(resultsDir, `${name}.tap`))) console.error('run-tests: no TAP output written');
process.exit(res.status ?? 1);
