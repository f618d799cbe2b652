import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Measurement } from '@asterism/attestation';
import { formatMeasurementTable, measurementRows } from './report.js';

const m = (b: number, validationOpt: Measurement['validationOpt'] = 'Enforce'): Measurement => ({ expected: Buffer.alloc(32, b), validationOpt });

describe('verify report', () => {
  const expected = new Map([
    [4, m(4)],
    [9, m(9)],
    [12, m(12, 'WarnOnly')],
  ]);
  const actual = new Map<number, Uint8Array>([
    [4, Buffer.alloc(32, 4)],
    [9, Buffer.alloc(32, 0xee)],
    [12, Buffer.alloc(32, 0xcc)],
    [15, Buffer.alloc(32, 0x15)],
  ]);

  it('classifies each register', () => {
    const rows = measurementRows(expected, actual);
    assert.deepEqual(rows.map((r) => [r.index, r.status]), [[4, 'ok'], [9, 'mismatch'], [12, 'warn'], [15, 'info']]);
    assert.equal(rows[1]!.expected, '09'.repeat(32));
    assert.equal(rows[1]!.actual, 'ee'.repeat(32));
  });

  it('names the differing PCR with expected and actual values', () => {
    const text = formatMeasurementTable(measurementRows(expected, actual));
    assert.match(text, / {2}9 {2}MISMATCH +expected (09){32}\n +actual +(ee){32}/);
    assert.match(text, /differ at PCR 9: this node would be refused/);
    assert.match(formatMeasurementTable(measurementRows(new Map([[4, m(4)]]), actual)), /All enforced measurements match/);
  });

  it('reports a missing register', () => {
    const rows = measurementRows(new Map([[7, m(7)]]), new Map());
    assert.deepEqual(rows, [{ index: 7, expected: '07'.repeat(32), actual: null, status: 'mismatch' }]);
  });
});
