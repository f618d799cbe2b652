import type { Measurement } from '@asterism/attestation';

/** One row of `asterism verify`'s table. */
export interface MeasurementRow {
  index: number;
  expected: string | null;
  actual: string | null;
  /** ok: equal; mismatch: enforced and different (attestation fails); warn: WarnOnly and different; info: not in the expected set. */
  status: 'ok' | 'mismatch' | 'warn' | 'info';
}

/** Rows for every register that is expected or present, ascending. */
export function measurementRows(expected: ReadonlyMap<number, Measurement>, actual: ReadonlyMap<number, Uint8Array>): MeasurementRow[] {
  const indices = [...new Set([...expected.keys(), ...actual.keys()])].sort((a, b) => a - b);
  return indices.map((index) => {
    const want = expected.get(index);
    const got = actual.get(index);
    const actualHex = got === undefined || got.length === 0 ? null : Buffer.from(got).toString('hex');
    if (!want) return { index, expected: null, actual: actualHex, status: 'info' };
    const expectedHex = want.expected.toString('hex');
    const status = actualHex === expectedHex ? 'ok' : want.validationOpt === 'Enforce' ? 'mismatch' : 'warn';
    return { index, expected: expectedHex, actual: actualHex, status };
  });
}

const MARK: Record<MeasurementRow['status'], string> = { ok: 'ok', mismatch: 'MISMATCH', warn: 'differs (warn only)', info: '-' };

/**
 * A plain-text table: index, status, expected and actual (full hex; differing rows stand out).
 * `register` names the indices: PCRs, or a TD's MRTD + RTMR0..3 (`TDX index` 0..4).
 */
export function formatMeasurementTable(rows: MeasurementRow[], register: 'PCR' | 'TDX index' = 'PCR'): string {
  const lines = [register === 'PCR' ? 'PCR  STATUS               EXPECTED / ACTUAL' : 'IDX  STATUS               EXPECTED / ACTUAL (TDX index: 0 MRTD, 1..4 RTMR0..3)'];
  for (const r of rows) {
    lines.push(`${String(r.index).padStart(3)}  ${MARK[r.status].padEnd(19)}  expected ${r.expected ?? '(not checked)'}`);
    lines.push(`${' '.repeat(26)}actual   ${r.actual ?? '(missing)'}`);
  }
  const bad = rows.filter((r) => r.status === 'mismatch');
  lines.push('');
  lines.push(bad.length === 0 ? 'All enforced measurements match.' : `Enforced measurements differ at ${register} ${bad.map((r) => r.index).join(', ')}: this node would be refused.`);
  return lines.join('\n');
}
