import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { placeHolderMeasurement, withAllBytes, type ValidationOption } from './measurement.js';
import { Measurements } from './measurements.js';

const W = (b: number) => withAllBytes(b, 'WarnOnly');
const E = (b: number) => withAllBytes(b, 'Enforce');

describe('Measurements', () => {
  describe('copyFrom (TestMeasurementsCopyFrom)', () => {
    const cases: Array<[string, Measurements, Measurements, Measurements]> = [
      ['add to empty', new Measurements(), Measurements.of({ 1: W(0), 2: W(1), 3: W(2) }), Measurements.of({ 1: W(0), 2: W(1), 3: W(2) })],
      ['keep existing', Measurements.of({ 4: E(1), 5: W(2) }), Measurements.of({ 1: W(0), 2: W(1), 3: W(2) }), Measurements.of({ 1: W(0), 2: W(1), 3: W(2), 4: E(1), 5: W(2) })],
      ['overwrite existing', Measurements.of({ 2: E(4), 3: E(5) }), Measurements.of({ 1: W(0), 2: W(1), 3: W(2) }), Measurements.of({ 1: W(0), 2: W(1), 3: W(2) })],
    ];
    for (const [name, current, other, want] of cases) {
      it(name, () => assert.ok(current.copyFrom(other).equalTo(want)));
    }
  });

  it('copy is independent', () => {
    const m = Measurements.of({ 1: E(1) });
    const c = m.copy();
    c.get(1)!.expected[0] = 9;
    c.set(2, E(2));
    assert.equal(m.get(1)!.expected[0], 1);
    assert.equal(m.size, 1);
    assert.ok(c instanceof Measurements);
  });

  describe('equalTo (TestEqualTo)', () => {
    const cases: Array<[string, Measurements, Measurements, boolean]> = [
      ['same values', Measurements.of({ 0: E(0), 1: W(1) }), Measurements.of({ 1: W(1), 0: E(0) }), true],
      ['different number of elements', Measurements.of({ 0: E(0), 1: E(1) }), Measurements.of({ 0: E(0) }), false],
      ['different values', Measurements.of({ 0: E(0), 1: E(1) }), Measurements.of({ 0: E(0), 1: E(2) }), false],
      ['different flags', Measurements.of({ 0: E(0) }), Measurements.of({ 0: W(0) }), false],
      ['different indices', Measurements.of({ 0: E(0) }), Measurements.of({ 1: E(0) }), false],
      ['both empty', new Measurements(), new Measurements(), true],
    ];
    for (const [name, a, b, want] of cases) {
      it(name, () => {
        assert.equal(a.equalTo(b), want);
        assert.equal(b.equalTo(a), want);
      });
    }
  });

  describe('getEnforced (TestGetEnforced)', () => {
    const cases: Array<[string, Measurements, number[]]> = [
      ['no enforcements', Measurements.of({ 0: W(0), 1: W(1) }), []],
      ['all enforced', Measurements.of({ 0: E(0), 1: E(1), 2: E(2) }), [0, 1, 2]],
      ['mixed, ascending', Measurements.of([[15, E(0)], [2, W(0)], [1, E(0)], [10, E(0)]]), [1, 10, 15]],
    ];
    for (const [name, m, want] of cases) it(name, () => assert.deepEqual(m.getEnforced(), want));
  });

  describe('setEnforced (TestSetEnforced)', () => {
    const cases: Array<[string, Measurements, number[], Record<number, ValidationOption> | 'error']> = [
      ['previously all enforced', Measurements.of({ 0: E(0), 1: E(1), 2: E(2) }), [0, 2], { 0: 'Enforce', 1: 'WarnOnly', 2: 'Enforce' }],
      ['previously all warn-only', Measurements.of({ 0: W(0), 1: W(1), 2: W(2) }), [1], { 0: 'WarnOnly', 1: 'Enforce', 2: 'WarnOnly' }],
      ['empty list', Measurements.of({ 0: E(0), 1: E(1) }), [], { 0: 'WarnOnly', 1: 'WarnOnly' }],
      ['unknown index', Measurements.of({ 0: E(0), 1: E(1) }), [0, 7], 'error'],
    ];
    for (const [name, m, list, want] of cases) {
      it(name, () => {
        if (want === 'error') {
          const before = m.copy();
          assert.throws(
            () => m.setEnforced(list),
            (e: unknown) => e instanceof AttestationError && e.code === 'MEASUREMENTS_INVALID' && e.details.index === 7 && e.message === 'measurement 7 not in list, but set to enforced',
          );
          assert.ok(m.equalTo(before), 'unchanged after failure');
          return;
        }
        m.setEnforced(list);
        assert.deepEqual(Object.fromEntries([...m].map(([k, v]) => [k, v.validationOpt])), want);
      });
    }
  });

  describe('withAllBytes / placeHolderMeasurement (TestWithAllBytes)', () => {
    const cases: Array<[string, number, ValidationOption, number]> = [
      ['0x00 warnOnly 32', 0x00, 'WarnOnly', 32],
      ['0x00 enforce 48', 0x00, 'Enforce', 48],
      ['0xff enforce 32', 0xff, 'Enforce', 32],
      ['0xcc warnOnly 48', 0xcc, 'WarnOnly', 48],
    ];
    for (const [name, b, opt, len] of cases) {
      it(name, () => {
        const m = withAllBytes(b, opt, len);
        assert.equal(m.expected.length, len);
        assert.ok(m.expected.every((x) => x === b));
        assert.equal(m.validationOpt, opt);
      });
    }
    it('defaults to 32 bytes', () => assert.equal(withAllBytes(1, 'Enforce').expected.length, 32));
    it('placeholder is 1234 repeated, Enforce', () => {
      assert.equal(placeHolderMeasurement().expected.toString('hex'), '1234'.repeat(16));
      assert.equal(placeHolderMeasurement(48).expected.toString('hex'), '1234'.repeat(24));
      assert.equal(placeHolderMeasurement().validationOpt, 'Enforce');
    });
  });

  for (const bad of [-1, 1.5, 2 ** 32, Number.NaN]) {
    it(`rejects index ${bad}`, () => assert.throws(() => new Measurements().set(bad, E(0)), (e: unknown) => e instanceof AttestationError && e.code === 'MEASUREMENTS_INVALID'));
  }

  it('toJSON gives a readable object', () => {
    assert.deepEqual(JSON.parse(JSON.stringify(Measurements.of({ 2: W(1) }))), { 2: { expected: '01'.repeat(32), warnOnly: true } });
  });
});
