/**
 * Comparing expected measurements with the values a validator read from verified evidence
 * (docs/protocol/measurements.md, docs/protocol/vtpm-attestation.md validation stage 6), and turning the result into a policy error.
 */
import { AttestationError } from '../errors.js';
import type { AttestationLogger } from '../interfaces.js';
import type { Measurement } from './measurement.js';

/** One expected index whose actual value differs (or is missing). */
export interface MeasurementMismatch {
  readonly index: number;
  /** Expected value, lower-case hex. */
  readonly expected: string;
  /** Actual value, lower-case hex; `null` when the evidence has no (or an empty) value. */
  readonly actual: string | null;
  /** True for Enforce entries (errors), false for WarnOnly entries (warnings). */
  readonly enforced: boolean;
  /** The reference's text, e.g. `untrusted measurement value <hex> at index 4` (warnings prefixed `Encountered `). */
  readonly message: string;
}

/** Result of a comparison: Enforce mismatches are errors, WarnOnly mismatches warnings. */
export interface CompareResult {
  readonly errors: MeasurementMismatch[];
  readonly warnings: MeasurementMismatch[];
}

/**
 * Compares every expected index, ascending, with `actual`. A missing or empty actual value is a
 * mismatch. Indices present only in `actual` are ignored.
 */
export function compareMeasurements(expected: ReadonlyMap<number, Measurement>, actual: ReadonlyMap<number, Uint8Array>): CompareResult {
  const errors: MeasurementMismatch[] = [];
  const warnings: MeasurementMismatch[] = [];
  for (const index of [...expected.keys()].sort((a, b) => a - b)) {
    const want = expected.get(index)!;
    const got = actual.get(index);
    if (got !== undefined && want.expected.equals(got)) continue;
    const actualHex = got === undefined || got.length === 0 ? null : Buffer.from(got).toString('hex');
    const text = actualHex === null ? `missing measurement value for index ${index}` : `untrusted measurement value ${actualHex} at index ${index}`;
    const enforced = want.validationOpt === 'Enforce';
    const item = { index, expected: want.expected.toString('hex'), actual: actualHex, enforced, message: enforced ? text : `Encountered ${text}` };
    (enforced ? errors : warnings).push(item);
  }
  return { errors, warnings };
}

/** Options for naming registers in messages. */
export interface MismatchErrorOptions {
  /** Register name in messages: `PCR` (default) for vTPM variants, e.g. `MR` for TDX. */
  readonly registerLabel?: string;
}

const short = (hex: string | null) => (hex === null ? 'nothing' : hex.length > 8 ? `${hex.slice(0, 8)}…` : hex);

/**
 * One MEASUREMENT_MISMATCH error for all enforced mismatches, or `undefined` when there are none.
 * The message names every register (`measurement validation failed: PCR[4] expected 5198fd54…
 * got ab12cd34…`); `details.mismatches` carries index, full expected/actual hex and the flag.
 */
export function measurementMismatchError(result: CompareResult, options: MismatchErrorOptions = {}): AttestationError | undefined {
  if (result.errors.length === 0) return undefined;
  const label = options.registerLabel ?? 'PCR';
  const parts = result.errors.map((e) => `${label}[${e.index}] expected ${short(e.expected)} got ${short(e.actual)}`);
  return new AttestationError('MEASUREMENT_MISMATCH', `measurement validation failed: ${parts.join('; ')}`, {
    details: {
      mismatches: result.errors.map(({ index, expected, actual, enforced }) => ({ index, expected, actual, enforced })),
      reference: result.errors.map((e) => e.message),
    },
  });
}

/**
 * The validator's last stage: compare, log every warning through `logger.warn` (with the same
 * structured fields), and throw the MEASUREMENT_MISMATCH error if anything enforced differs.
 */
export function enforceMeasurements(
  expected: ReadonlyMap<number, Measurement>,
  actual: ReadonlyMap<number, Uint8Array>,
  logger: AttestationLogger,
  options: MismatchErrorOptions = {},
): CompareResult {
  const result = compareMeasurements(expected, actual);
  for (const w of result.warnings) logger.warn(w.message, { index: w.index, expected: w.expected, actual: w.actual });
  const err = measurementMismatchError(result, options);
  if (err) throw err;
  return result;
}
