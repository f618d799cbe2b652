#!/usr/bin/env node
// Fails when libs/proto/src/gen differs from what `buf generate` produces from proto/.
// Generates into a temporary copy of the workspace config and compares file by file.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const workspace = resolve(import.meta.dirname, '..', '..');
const checkedIn = join(workspace, 'libs/proto/src/gen');
const out = mkdtempSync(join(tmpdir(), 'proto-drift-'));
try {
  const template = readFileSync(join(workspace, 'buf.gen.yaml'), 'utf8').replace('out: libs/proto/src/gen', `out: ${out}`);
  const templatePath = join(out, 'buf.gen.yaml');
  writeFileSync(templatePath, template);
  const gen = spawnSync('npx', ['buf', 'generate', '--template', templatePath], { cwd: workspace, encoding: 'utf8' });
  if (gen.status !== 0) {
    console.error(`check-proto-drift: buf generate failed:\n${gen.stderr}`);
    process.exit(1);
  }
  const list = (dir) =>
    readdirSync(dir, { recursive: true })
      .map(String)
      .filter((p) => p.endsWith('.ts') && statSync(join(dir, p)).isFile())
      .sort();
  const fresh = list(out);
  const have = list(checkedIn);
  const problems = [];
  for (const f of new Set([...fresh, ...have])) {
    if (!fresh.includes(f)) problems.push(`${f}: checked in but not generated from proto/`);
    else if (!have.includes(f)) problems.push(`${f}: generated from proto/ but not checked in`);
    else if (readFileSync(join(out, f), 'utf8') !== readFileSync(join(checkedIn, f), 'utf8')) problems.push(`${f}: content differs`);
  }
  if (problems.length > 0) {
    console.error(`check-proto-drift: ${relative(workspace, checkedIn)} is out of date with proto/ (run \`npx nx run proto:generate\`):`);
    for (const p of problems) console.error(`  - ${p}`);
    process.exit(1);
  }
  console.log(`check-proto-drift: ${have.length} generated files match proto/`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
