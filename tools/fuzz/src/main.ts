/**
 * Longer local runs of the gate: `npx tsx tools/fuzz/src/main.ts [--seed N] [--scale X] [--only <name prefix>]`. CI runs
 * the spec (seed 1, scale 1); other seeds and larger scales explore further.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { WORKSPACE_ROOT } from '@asterism/testing';
import { runGate } from './run-gate.js';
import { allTargets } from './targets/index.js';

const { values } = parseArgs({ options: { seed: { type: 'string', default: '1' }, scale: { type: 'string', default: '1' }, only: { type: 'string', default: '' } } });
const targets = (await allTargets()).filter((t) => t.name.startsWith(values.only));
const report = await runGate(targets, { gateSeed: Number(values.seed), scale: Number(values.scale), out: join(WORKSPACE_ROOT, '.test-results', 'fuzz-gate-local.json') });
for (const t of report.targets) process.stdout.write(`${JSON.stringify({ target: t.target, inputs: t.inputs, accepted: t.accepted, notReached: t.notReached, foreign: t.foreign, ms: t.ms, cpuMs: t.cpuMs })}\n`);
for (const f of report.findings) process.stdout.write(`FOREIGN ${f.target} [${f.parser}] seed=${f.seed} #${f.index}: ${f.error}\n${f.stack}\ninput: ${f.inputHex.slice(0, 400)}…\n`);
process.stdout.write(`fuzz-gate: ${report.inputs} inputs tried, ${report.foreign} foreign exceptions, ${report.seconds} s (seed ${report.gateSeed}, scale ${report.scale})\n`);
process.exitCode = report.foreign === 0 ? 0 : 1;
