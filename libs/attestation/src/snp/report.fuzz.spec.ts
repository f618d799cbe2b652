import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AttestationError } from '../errors.js';
import { decodeSnpInstanceInfo } from './instance-info.js';
import { parseReport } from './report.js';
import { goldenSnp } from './golden-vectors.fixture.js';

const golden = goldenSnp();

/** Runs `parse`; only AttestationErrors may escape (anything else fails the property). */
function onlyTypedErrors(parse: () => unknown): boolean {
  try {
    parse();
  } catch (e) {
    if (!(e instanceof AttestationError)) throw e;
  }
  return true;
}

describe('parseReport fuzzing: only AttestationErrors escape', () => {
  it('100,000 mutations of the real Azure and VLEK reports (byte overwrites, truncations, extensions)', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.integer({ min: 0, max: 1300 }),
        fc.integer({ min: 0, max: 1183 }),
        fc.integer({ min: 0, max: 255 }),
        (vlek, length, at, value) => {
          const base = vlek ? golden.vlekReport : golden.azureReport;
          const bytes = Buffer.alloc(length);
          base.copy(bytes, 0, 0, Math.min(length, base.length));
          if (at < length) bytes[at] = value;
          return onlyTypedErrors(() => parseReport(bytes));
        },
      ),
      { numRuns: 100_000 },
    );
  });
});

describe('decodeSnpInstanceInfo fuzzing: only AttestationErrors escape', () => {
  const json = fc.oneof(
    fc.json(),
    fc.record({ ReportSigner: fc.oneof(fc.string(), fc.base64String(), fc.integer()), CertChain: fc.oneof(fc.string(), fc.base64String(), fc.constant(null)), AttestationReport: fc.oneof(fc.base64String(), fc.string(), fc.array(fc.integer())), Azure: fc.oneof(fc.constant(null), fc.record({ RuntimeData: fc.string(), MAAToken: fc.string() })), GCP: fc.oneof(fc.constant(null), fc.record({ zone: fc.string(), project_number: fc.oneof(fc.bigInt().map(String), fc.string()), instance_id: fc.integer() })) }).map((o) => JSON.stringify(o)),
  );
  it('100,000 inputs: random bytes, random JSON and JSON with the instance-info field names', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 64 }), json.map((t) => Buffer.from(t))), (bytes) => onlyTypedErrors(() => decodeSnpInstanceInfo(bytes))),
      { numRuns: 100_000 },
    );
  });
});
