import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { productLineOf, requireSupportedProduct } from './product.js';
import { parseReport, REPORT_SIZE } from './report.js';
import { buildReport, goldenSnp } from './test-fixtures.js';

const golden = goldenSnp();
const code = (c: string, re?: RegExp) => (e: unknown) => e instanceof AttestationError && e.code === c && (!re || re.test(e.message));

describe('parseReport: golden vectors', () => {
  it('decodes the real Azure report (values in docs/protocol/sev-snp.md)', () => {
    const r = parseReport(golden.azureReport);
    assert.equal(r.version, 2);
    assert.equal(r.guestSvn, 2);
    assert.equal(r.policy.raw, 0x3001fn);
    assert.deepEqual([r.policy.abiMajor, r.policy.abiMinor, r.policy.smt, r.policy.debug, r.policy.migrateMa], [0, 31, true, false, false]);
    assert.equal(r.vmpl, 0);
    assert.equal(r.signingKey, 'vcek');
    const digest = createHash('sha256').update(golden.runtimeData).digest();
    assert.deepEqual(r.reportData, Buffer.concat([digest, Buffer.alloc(32)]));
    assert.equal(digest.toString('hex'), '0ccc0895ef2f2c3b8c8568f5a2bb65ff5bf9387a09359742ad41e686cacfd38b');
    assert.equal(r.measurement.toString('hex'), '5677f1de87289e7ad2c7e99c805d0468b1a9ccd83f0d245afa5242d405da4d5725852f8c6550564870e5f3206dfb1841');
    assert.equal(r.idKeyDigest.toString('hex'), '57e229e0ffe5fa92d0faddff6cae0e61c926fc9ef9afd20a8b8cfcf7129db9338cbe5bf3f6987733a2bf65d06dc38fc1');
    for (const tcb of [r.currentTcb, r.reportedTcb, r.committedTcb, r.launchTcb]) assert.deepEqual(tcb, { bootloader: 2, tee: 0, snp: 6, microcode: 93 });
    assert.match(r.chipId.toString('hex'), /^9e44aaef.*b9dcf25b$/);
    assert.deepEqual(r.currentVersion, { major: 1, minor: 51, build: 1 });
    assert.equal(r.cpuid, undefined);
    assert.equal(productLineOf(r.cpuid), 'Milan');
  });

  it('decodes the real VLEK report (values in docs/protocol/sev-snp.md)', () => {
    const r = parseReport(golden.vlekReport);
    assert.equal(r.signingKey, 'vlek');
    assert.equal(r.policy.raw, 0x30000n);
    assert.deepEqual(r.currentTcb, { bootloader: 3, tee: 0, snp: 10, microcode: 206 });
    for (const tcb of [r.reportedTcb, r.committedTcb, r.launchTcb]) assert.deepEqual(tcb, { bootloader: 3, tee: 0, snp: 10, microcode: 115 });
    assert.ok(r.chipId.every((b) => b === 0));
    assert.ok(r.idKeyDigest.every((b) => b === 0));
    assert.match(r.reportData.toString('hex'), /^44a93ab0.*b5cfec$/);
  });

  it('the HCL runtime-data header after the Azure report says SNP, SHA-256, 584 bytes', () => {
    assert.equal(golden.azureHclHeader.toString('hex'), '5c020000010000000200000001000000' + '48020000');
    assert.equal(golden.runtimeData.length, 0x248);
  });
});

describe('parseReport: structure and must-be-zero rules', () => {
  const set = (offset: number, value: number) => {
    const b = Buffer.from(golden.azureReport);
    b[offset] = value;
    return b;
  };
  const cases: Array<[string, () => Uint8Array, string, RegExp]> = [
    ['truncated by 100 bytes', () => golden.azureReport.subarray(0, REPORT_SIZE - 100), 'size', /expected 1184 bytes, got 1084/],
    ['10 bytes cut at both ends', () => golden.azureReport.subarray(10, REPORT_SIZE - 10), 'size', /got 1164/],
    ['trailing byte', () => Buffer.concat([golden.azureReport, Buffer.alloc(1)]), 'size', /got 1185/],
    ['version 1', () => set(0, 1), 'version', /version 1 is not supported/],
    ['version 5', () => set(0, 5), 'version', /version 5/],
    ['signature algorithm 2', () => set(0x34, 2), 'signatureAlgo', /signature algorithm 2/],
    ['VMPL 4', () => set(0x30, 4), 'vmpl', /VMPL 4 is out of range/],
    ['policy bit 26', () => set(0x0b, 0x04), 'policy', /reserved bits 26-63/],
    ['policy bit 63', () => set(0x0f, 0x80), 'policy', /reserved bits 26-63/],
    ['policy bit 17 clear', () => set(0x0a, 0x01), 'policy', /must set reserved bit 17/],
    ['signer info bit 5', () => set(0x48, 0x20), 'signerInfo', /reserved bits 5-31/],
    ['signing key 2 (reserved)', () => set(0x48, 2 << 2), 'signingKey', /signing key 2 is reserved/],
    ['reserved after signer info', () => set(0x4d, 1), 'reserved after signer info', /must be zero/],
    ['v2 reserved after REPORTED_TCB', () => set(0x188, 0x19), 'reserved after REPORTED_TCB', /offset 0x188/],
    ['reserved after current version', () => set(0x1eb, 1), 'reserved after current version', /must be zero/],
    ['reserved after committed version', () => set(0x1ef, 1), 'reserved after committed version', /must be zero/],
    ['reserved after LAUNCH_TCB', () => set(0x29f, 1), 'reserved after LAUNCH_TCB', /byte 0x29f/],
    ['signature R high bytes', () => set(0x2a0 + 50, 1), 'signature R high bytes', /must be zero/],
    ['signature S high bytes', () => set(0x2e8 + 71, 1), 'signature S high bytes', /must be zero/],
    ['reserved after the signature', () => set(0x49f, 1), 'reserved after the signature', /byte 0x49f/],
  ];
  for (const [name, input, field, message] of cases) {
    it(`refuses ${name} with REPORT_INVALID naming ${field}`, () => {
      assert.throws(
        () => parseReport(input()),
        (e: unknown) => code('REPORT_INVALID', message)(e) && (e as AttestationError).details.field === field,
      );
    });
  }

  it('version 3: CPUID bytes name the product line; the rest of the field must be zero', () => {
    const milan = parseReport(buildReport({ version: 3, cpuid: [0x19, 0x01, 0x01] }));
    assert.deepEqual(milan.cpuid, { family: 0x19, model: 1, stepping: 1 });
    assert.equal(requireSupportedProduct(milan), 'Milan');
    const b = buildReport({ version: 3, cpuid: [0x19, 0x01, 0x01] });
    b[0x18b] = 1;
    assert.throws(() => parseReport(b), code('REPORT_INVALID', /reserved after CPUID/));
  });

  const lines: Array<[string, [number, number, number], string]> = [
    ['Genoa', [0x19, 0x11, 0x01], 'Genoa'],
    ['Bergamo/Siena', [0x19, 0xa0, 0x00], 'Bergamo/Siena'],
    ['Turin', [0x1a, 0x02, 0x00], 'Turin'],
    ['an unknown family', [0x17, 0x31, 0x00], 'unknown'],
  ];
  for (const [name, cpuid, line] of lines) {
    it(`refuses a report from ${name} with PRODUCT_UNSUPPORTED naming it`, () => {
      const r = parseReport(buildReport({ version: 3, cpuid }));
      assert.throws(
        () => requireSupportedProduct(r),
        (e: unknown) => code('PRODUCT_UNSUPPORTED', new RegExp(`AMD ${line.replace('/', '\\/')} processor .*only Milan is supported`))(e) && (e as AttestationError).details.actual === line,
      );
    });
  }
});
