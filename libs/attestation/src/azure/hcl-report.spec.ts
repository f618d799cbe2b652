import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AttestationError } from '../errors.js';
import { HCL_IGVM_HEADER_OFFSET, parseTdxHclReport } from './hcl-report.js';

const report = readFileSync(new URL('../../../../testdata/tdx/hclreport.bin', import.meta.url));

function patched(offset: number, value: number): Buffer {
  const out = Buffer.from(report);
  out.writeUInt32LE(value, offset);
  return out;
}

describe('parseTdxHclReport (real Azure TDX HCL report)', () => {
  it('parses: TD report at [32,1056), 1200 bytes of runtime data JSON at [1236,2436) bound by REPORT_DATA', () => {
    const r = parseTdxHclReport(report);
    assert.equal(report.length, 2600);
    assert.equal(r.tdReport.length, 1024);
    assert.equal(r.tdReport[0], 0x81, 'REPORTMACSTRUCT type TDX');
    assert.equal(r.runtimeData.length, 1200);
    const json = JSON.parse(r.runtimeData.toString('utf8')) as { keys: { kid: string }[] };
    assert.equal(json.keys[0]!.kid, 'HCLAkPub');
    assert.ok(createHash('sha256').update(r.runtimeData).digest().equals(r.tdReport.subarray(128, 160)), 'SHA-256(runtime data) = REPORT_DATA[0:32]');
  });

  const cases: { name: string; bytes: Buffer; field: string }[] = [
    { name: 'report type 0 (invalid)', bytes: patched(HCL_IGVM_HEADER_OFFSET + 8, 0), field: 'report type' },
    { name: 'report type 2 (SNP)', bytes: patched(HCL_IGVM_HEADER_OFFSET + 8, 2), field: 'report type' },
    { name: 'truncated to 1227 bytes', bytes: report.subarray(0, 1227), field: 'length' },
    { name: 'truncated to 1235 bytes', bytes: report.subarray(0, 1235), field: 'length' },
    { name: 'runtime data size 0xFFFF', bytes: patched(HCL_IGVM_HEADER_OFFSET + 16, 0xffff), field: 'runtime data size' },
    { name: 'runtime data size 0xFFFFFFFF', bytes: patched(HCL_IGVM_HEADER_OFFSET + 16, 0xffffffff), field: 'runtime data size' },
    { name: 'empty input', bytes: Buffer.alloc(0), field: 'length' },
  ];
  for (const c of cases) {
    it(`refuses ${c.name} with REPORT_INVALID naming ${c.field}`, () =>
      assert.throws(() => parseTdxHclReport(c.bytes), (err: AttestationError) => err instanceof AttestationError && err.code === 'REPORT_INVALID' && err.details.field === c.field));
  }

  it('accepts a runtime data size of 0 (empty runtime data; the AK binding check refuses it later)', () => {
    assert.equal(parseTdxHclReport(patched(HCL_IGVM_HEADER_OFFSET + 16, 0)).runtimeData.length, 0);
  });
});

describe('parseTdxHclReport fuzzing: only AttestationErrors escape', () => {
  const onlyTyped = (bytes: Uint8Array) => {
    try {
      parseTdxHclReport(bytes);
    } catch (err) {
      if (!(err instanceof AttestationError)) throw err;
    }
  };
  it('100,000 mutations of the real report (byte overwrites in the header fields, truncations)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: report.length }), fc.integer({ min: HCL_IGVM_HEADER_OFFSET, max: HCL_IGVM_HEADER_OFFSET + 20 }), fc.integer({ min: 0, max: 255 }), (len, offset, value) => {
        const b = Buffer.from(report.subarray(0, len));
        if (offset < b.length) b[offset] = value;
        onlyTyped(b);
      }),
      { numRuns: 100_000 },
    );
  });
  it('arbitrary bytes', () => fc.assert(fc.property(fc.uint8Array({ maxLength: 2600 }), onlyTyped), { numRuns: 2_000 }));
});
