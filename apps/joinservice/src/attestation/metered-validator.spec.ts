import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { AttestationError, compareMeasurements, measurementMismatchError, Variant, withAllBytes, type Validator } from '@asterism/attestation';
import { createNopLogger } from '@asterism/logger';
import { JoinMetrics } from '../metrics.js';
import { MeteredValidator, mismatchedRegisters } from './metered-validator.js';

/** A validator that always fails with `err` (or succeeds when `err` is undefined). */
function failing(err: unknown, variant = 'qemu-vtpm'): Validator {
  return {
    variant: Variant.fromString(variant),
    validate: async () => {
      if (err !== undefined) throw err;
      return new Uint8Array([1]);
    },
  };
}

/** The MEASUREMENT_MISMATCH error libs/attestation throws when `actual` differs from all-zero expected values at `expected`. */
function mismatch(expected: number[], actual: Record<number, number>): AttestationError {
  const want = new Map(expected.map((i) => [i, withAllBytes(0, 'Enforce')]));
  const got = new Map(Object.entries(actual).map(([i, b]) => [Number(i), Buffer.alloc(32, b)]));
  return measurementMismatchError(compareMeasurements(want, got))!;
}

async function refuse(err: unknown, variant?: string): Promise<string> {
  const registry = new Registry();
  const validator = new MeteredValidator(failing(err, variant), new JoinMetrics(registry), createNopLogger());
  await assert.rejects(validator.validate(new Uint8Array(), new Uint8Array()));
  return registry.metrics();
}

describe('MeteredValidator', () => {
  it('counts one measurement mismatch per register index the error names, beside the refusal', async () => {
    const text = await refuse(mismatch([4, 9, 11], { 4: 0, 9: 1, 11: 2 }));
    assert.match(text, /joinservice_tickets_refused_total\{kind="attestation",reason="MEASUREMENT_MISMATCH",variant="qemu-vtpm"\} 1/);
    assert.match(text, /joinservice_measurement_mismatches_total\{variant="qemu-vtpm",pcr="9"\} 1/);
    assert.match(text, /joinservice_measurement_mismatches_total\{variant="qemu-vtpm",pcr="11"\} 1/);
    assert.doesNotMatch(text, /pcr="4"/, 'a matching register is not counted');
  });

  it('labels the variant of the wrapped validator', async () => {
    const text = await refuse(mismatch([2], {}), 'qemu-tdx');
    assert.match(text, /joinservice_measurement_mismatches_total\{variant="qemu-tdx",pcr="2"\} 1/);
  });

  it('counts nothing per register for other refusals', async () => {
    for (const err of [new AttestationError('QUOTE_SIGNATURE_INVALID', 'bad signature'), new Error('boom')]) {
      const text = await refuse(err);
      assert.match(text, /joinservice_tickets_refused_total\{kind="attestation",reason="(QUOTE_SIGNATURE_INVALID|VALIDATION_FAILED)"/);
      assert.doesNotMatch(text, /joinservice_measurement_mismatches_total\{/);
    }
  });

  it('passes a valid document through without counting', async () => {
    const registry = new Registry();
    const out = await new MeteredValidator(failing(undefined), new JoinMetrics(registry), createNopLogger()).validate(new Uint8Array(), new Uint8Array());
    assert.deepEqual([...out], [1]);
    assert.doesNotMatch(await registry.metrics(), /_total\{/);
  });
});

describe('mismatchedRegisters', () => {
  const shaped = (mismatches: unknown) => new AttestationError('MEASUREMENT_MISMATCH', 'x', { details: { mismatches } });
  const cases: Array<[string, unknown, number[]]> = [
    ['indices of the details, ascending and deduplicated', shaped([{ index: 11 }, { index: 9 }, { index: 9 }]), [9, 11]],
    ['indices outside 0-63 or not integers are dropped (bounded label set)', shaped([{ index: -1 }, { index: 64 }, { index: 1.5 }, { index: '9' }, null, { index: 63 }]), [63]],
    ['no details', new AttestationError('MEASUREMENT_MISMATCH', 'x'), []],
    ['another code', new AttestationError('PCR_DIGEST_MISMATCH', 'x', { details: { mismatches: [{ index: 1 }] } }), []],
    ['not an attestation error', new Error('x'), []],
  ];
  for (const [name, err, want] of cases) it(name, () => assert.deepEqual(mismatchedRegisters(err), want));
});
