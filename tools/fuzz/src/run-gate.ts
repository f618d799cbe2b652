/**
 * Runs every target and writes the report: one summary line (inputs tried, foreign exceptions,
 * seconds) and `.test-results/fuzz-gate.json` with the per-target counts and every finding's
 * input in hex.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WORKSPACE_ROOT } from '@asterism/testing';
import { runTarget, type Finding, type FuzzTarget, type TargetReport } from './gate.js';
import { allVectors, usedVectors } from './vectors.js';

/** The whole run. */
export interface GateReport {
  readonly gateSeed: number;
  readonly scale: number;
  readonly inputs: number;
  readonly foreign: number;
  readonly seconds: number;
  readonly vectors: { readonly all: string[]; readonly unused: string[] };
  readonly targets: TargetReport[];
  readonly findings: Finding[];
}

/** Runs `targets` in order; writes the JSON report and returns it. */
export async function runGate(targets: FuzzTarget[], options: { gateSeed?: number; scale?: number; out?: string } = {}): Promise<GateReport> {
  const gateSeed = options.gateSeed ?? 1;
  const scale = options.scale ?? 1;
  const started = performance.now();
  const reports: TargetReport[] = [];
  const findings: Finding[] = [];
  for (const t of targets) {
    const r = await runTarget(t, { gateSeed, scale });
    reports.push(r.report);
    findings.push(...r.findings);
  }
  const used = new Set(usedVectors());
  const all = allVectors();
  const report: GateReport = {
    gateSeed,
    scale,
    inputs: reports.reduce((n, r) => n + r.inputs, 0),
    foreign: reports.reduce((n, r) => n + r.foreign, 0),
    seconds: Math.round((performance.now() - started) / 100) / 10,
    vectors: { all, unused: all.filter((v) => !used.has(v)) },
    targets: reports,
    findings,
  };
  const dir = join(WORKSPACE_ROOT, '.test-results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(options.out ?? join(dir, 'fuzz-gate.json'), `${JSON.stringify(report, null, 2)}\n`);
  return report;
}
