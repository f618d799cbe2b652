import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runGate } from './run-gate.js';
import { allTargets } from './targets/index.js';

// The CI gate (README.md): fixed seed, fixed counts. It fails on any exception that is not an
// AsterismError and prints the parser and the input (hex); the full report is in
// .test-results/fuzz-gate.json.
describe('foreign-exception gate', () => {
  it('every parser that takes peer input throws only typed errors on mutations of the real vectors', async () => {
    const report = await runGate(await allTargets());
    const cpuSeconds = report.targets.reduce((s, t) => s + t.cpuMs, 0) / 1000;
    for (const f of report.findings) console.log(`[fuzz-gate] FOREIGN in ${f.target} (${f.parser}), from ${f.seed}, input #${f.index}: ${f.error}\n${f.stack}\ninput (hex): ${f.inputHex}`);
    console.log(
      `[fuzz-gate] ${report.inputs} inputs tried over ${report.targets.length} parsers, ${report.foreign} foreign exceptions, ${report.seconds} s (${cpuSeconds.toFixed(1)} s CPU); .test-results/fuzz-gate.json`,
    );
    assert.deepEqual(report.vectors.unused, [], 'every vector of testdata/ seeds a target');
    for (const t of report.targets) assert.ok(t.accepted + t.notReached + Object.values(t.refused).reduce((a, b) => a + b, 0) + t.foreign === t.inputs);
    assert.equal(report.foreign, 0, `foreign exceptions: ${report.findings.map((f) => `${f.target}: ${f.error}`).join('; ')}`);
  });
});
