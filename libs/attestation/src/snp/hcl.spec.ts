import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { encodeHclReport, parseHclReport } from './hcl.js';
import { goldenSnp } from './golden-vectors.fixture.js';

const golden = goldenSnp();
/** The HCL report as Azure writes it to NV: header, real report + IGVM header (attestation.bin), runtime data. */
const real = Buffer.concat([encodeHclReport(golden.azureReport, golden.runtimeData).subarray(0, 32), golden.azureReport, golden.azureHclHeader, golden.runtimeData]);

describe('parseHclReport (NV 0x01400001 layout)', () => {
  it('splits the real HCL report into the SNP report and the runtime data', () => {
    const hcl = parseHclReport(real);
    assert.deepEqual(hcl.report, golden.azureReport);
    assert.deepEqual(hcl.runtimeData, golden.runtimeData);
  });

  it('runtime data ends at its first NUL (zero padding inside the declared size is not part of it)', () => {
    const padded = encodeHclReport(golden.azureReport, Buffer.concat([golden.runtimeData, Buffer.alloc(100)]), 4096);
    assert.equal(padded.length, 4096);
    assert.deepEqual(parseHclReport(padded).runtimeData, golden.runtimeData);
  });

  const withType = (t: number) => {
    const b = Buffer.from(real);
    b.writeUInt32LE(t, 32 + 0x4a0 + 8);
    return b;
  };
  const withSize = (n: number) => {
    const b = Buffer.from(real);
    b.writeUInt32LE(n, 32 + 0x4a0 + 16);
    return b;
  };
  const cases: Array<[string, Buffer, RegExp]> = [
    ['too short for the IGVM header', real.subarray(0, 32 + 0x4a0 + 10), /1226 bytes is too short \(at least 1236\)/],
    ['a TDX report type', withType(4), /report type 4 is not SEV-SNP \(2\)/],
    ['runtime data size beyond the data', withSize(10_000), /runtime data size 10000 exceeds the 584 bytes present/],
    ['runtime data size 0', withSize(0), /runtime data size 0/],
  ];
  for (const [name, bytes, re] of cases) {
    it(`refuses ${name} with ISSUER_FAILED`, () => {
      assert.throws(() => parseHclReport(bytes), (e: unknown) => e instanceof AttestationError && e.code === 'ISSUER_FAILED' && re.test(e.message));
    });
  }
});
