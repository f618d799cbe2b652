import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { compareMeasurements, enforceMeasurements, measurementMismatchError } from './compare.js';
import { withAllBytes } from './measurement.js';
import { Measurements } from './measurements.js';

const bytes = (b: number) => Buffer.alloc(32, b);
const actual = (rec: Record<number, Buffer>) => new Map(Object.entries(rec).map(([k, v]) => [Number(k), v]));

describe('compareMeasurements (TestMeasurementsCompare)', () => {
  type Case = [name: string, expected: Measurements, actual: Map<number, Buffer>, errors: string[], warnings: string[]];
  const cases: Case[] = [
    ['no errors', Measurements.of({ 0: withAllBytes(0, 'Enforce') }), actual({ 0: bytes(0) }), [], []],
    [
      'no errors, with warnings',
      Measurements.of({ 0: withAllBytes(0, 'WarnOnly'), 1: withAllBytes(1, 'WarnOnly') }),
      actual({ 0: bytes(1), 1: bytes(0) }),
      [],
      [`Encountered untrusted measurement value ${'01'.repeat(32)} at index 0`, `Encountered untrusted measurement value ${'00'.repeat(32)} at index 1`],
    ],
    [
      'with errors, no warnings',
      Measurements.of({ 0: withAllBytes(0, 'Enforce'), 1: withAllBytes(1, 'Enforce') }),
      actual({ 0: bytes(1), 1: bytes(0) }),
      [`untrusted measurement value ${'01'.repeat(32)} at index 0`, `untrusted measurement value ${'00'.repeat(32)} at index 1`],
      [],
    ],
    [
      'with errors and warnings',
      Measurements.of({ 0: withAllBytes(0, 'Enforce'), 1: withAllBytes(1, 'WarnOnly') }),
      actual({ 0: bytes(1), 1: bytes(0) }),
      [`untrusted measurement value ${'01'.repeat(32)} at index 0`],
      [`Encountered untrusted measurement value ${'00'.repeat(32)} at index 1`],
    ],
    ['extra actual indices are ignored', Measurements.of({ 0: withAllBytes(0, 'Enforce') }), actual({ 0: bytes(0), 1: bytes(1), 23: bytes(9) }), [], []],
    ['missing enforced index', Measurements.of({ 0: withAllBytes(0, 'Enforce'), 1: withAllBytes(1, 'Enforce') }), actual({ 0: bytes(0) }), ['missing measurement value for index 1'], []],
    ['missing warn-only index', Measurements.of({ 0: withAllBytes(0, 'Enforce'), 1: withAllBytes(1, 'WarnOnly') }), actual({ 0: bytes(0) }), [], ['Encountered missing measurement value for index 1']],
    ['empty actual value counts as missing', Measurements.of({ 3: withAllBytes(0, 'Enforce') }), actual({ 3: Buffer.alloc(0) }), ['missing measurement value for index 3'], []],
    ['different length is a mismatch', Measurements.of({ 3: withAllBytes(0, 'Enforce') }), actual({ 3: Buffer.alloc(48) }), [`untrusted measurement value ${'00'.repeat(48)} at index 3`], []],
    [
      'ascending index order',
      Measurements.of([
        [10, withAllBytes(0, 'Enforce')],
        [2, withAllBytes(0, 'Enforce')],
      ]),
      actual({}),
      ['missing measurement value for index 2', 'missing measurement value for index 10'],
      [],
    ],
  ];
  for (const [name, expected, got, errors, warnings] of cases) {
    it(name, () => {
      const r = compareMeasurements(expected, got);
      assert.deepEqual(
        r.errors.map((e) => e.message),
        errors,
      );
      assert.deepEqual(
        r.warnings.map((w) => w.message),
        warnings,
      );
      assert.ok(r.errors.every((e) => e.enforced) && r.warnings.every((w) => !w.enforced));
    });
  }

  it('structured items carry hex values', () => {
    const r = compareMeasurements(Measurements.of({ 4: withAllBytes(0xaa, 'Enforce'), 5: withAllBytes(0, 'Enforce') }), actual({ 4: bytes(0xbb) }));
    assert.deepEqual(r.errors[0], { index: 4, expected: 'aa'.repeat(32), actual: 'bb'.repeat(32), enforced: true, message: `untrusted measurement value ${'bb'.repeat(32)} at index 4` });
    assert.equal(r.errors[1]!.actual, null);
  });
});

describe('measurementMismatchError', () => {
  it('is undefined without errors', () => assert.equal(measurementMismatchError({ errors: [], warnings: [] }), undefined));

  it('names every PCR and carries the list', () => {
    const expected = Measurements.of({ 4: { expected: Buffer.from('5198fd549fc9f44a49168b788f58e366af624866647dbe7e917388a0b1673c1d', 'hex'), validationOpt: 'Enforce' }, 15: withAllBytes(0, 'Enforce') });
    const err = measurementMismatchError(compareMeasurements(expected, actual({ 4: Buffer.from('ab12'.repeat(16), 'hex') })))!;
    assert.ok(err instanceof AttestationError);
    assert.equal(err.code, 'MEASUREMENT_MISMATCH');
    assert.equal(err.message, 'measurement validation failed: PCR[4] expected 5198fd54… got ab12ab12…; PCR[15] expected 00000000… got nothing');
    assert.deepEqual(err.details.mismatches, [
      { index: 4, expected: '5198fd549fc9f44a49168b788f58e366af624866647dbe7e917388a0b1673c1d', actual: 'ab12'.repeat(16), enforced: true },
      { index: 15, expected: '00'.repeat(32), actual: null, enforced: true },
    ]);
  });

  it('uses the register label option', () => {
    const err = measurementMismatchError(compareMeasurements(Measurements.of({ 3: withAllBytes(0, 'Enforce', 48) }), actual({})), { registerLabel: 'MR' })!;
    assert.match(err.message, /^measurement validation failed: MR\[3\] expected/);
  });
});

describe('enforceMeasurements', () => {
  it('logs warnings and returns when nothing enforced differs', () => {
    const warned: Array<[string, Record<string, unknown> | undefined]> = [];
    const logger = { info: () => undefined, warn: (msg: string, f?: Record<string, unknown>) => void warned.push([msg, f]) };
    const r = enforceMeasurements(Measurements.of({ 0: withAllBytes(0, 'Enforce'), 2: withAllBytes(2, 'WarnOnly') }), actual({ 0: bytes(0), 2: bytes(3) }), logger);
    assert.equal(r.warnings.length, 1);
    assert.equal(warned.length, 1);
    assert.equal(warned[0]![0], `Encountered untrusted measurement value ${'03'.repeat(32)} at index 2`);
    assert.equal(warned[0]![1]!.index, 2);
  });

  it('throws MEASUREMENT_MISMATCH after logging warnings', () => {
    let warnings = 0;
    const logger = { info: () => undefined, warn: () => void warnings++ };
    assert.throws(
      () => enforceMeasurements(Measurements.of({ 0: withAllBytes(0, 'Enforce'), 1: withAllBytes(0, 'WarnOnly') }), actual({ 0: bytes(1) }), logger),
      (e: unknown) => e instanceof AttestationError && e.code === 'MEASUREMENT_MISMATCH',
    );
    assert.equal(warnings, 1);
  });
});
