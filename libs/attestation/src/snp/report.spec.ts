import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { productLineOf, requireSupportedProduct } from './product.js';
import { parseReport, REPORT_SIZE } from './report.js';
import { buildReport, goldenSnp } from './golden-vectors.fixture.js';

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
    ['version 6', () => set(0, 6), 'version', /version 6 is not supported \(2 to 5\)/],
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

  const supported: Array<[string, [number, number, number], string]> = [
    ['Milan', [0x19, 0x01, 0x01], 'Milan'],
    ['Genoa', [0x19, 0x11, 0x01], 'Genoa'],
    ['Turin', [0x1a, 0x02, 0x01], 'Turin'],
  ];
  for (const [name, cpuid, line] of supported) {
    it(`accepts the product line ${name} (CPUID ${cpuid.map((n) => n.toString(16)).join('/')})`, () => assert.equal(requireSupportedProduct(parseReport(buildReport({ version: 3, cpuid }))), line));
  }

  const lines: Array<[string, [number, number, number], string]> = [
    ['Bergamo/Siena', [0x19, 0xa0, 0x00], 'Bergamo/Siena'],
    ['a later Zen 5 model', [0x1a, 0x50, 0x00], 'unknown'],
    ['an unknown family', [0x17, 0x31, 0x00], 'unknown'],
  ];
  for (const [name, cpuid, line] of lines) {
    it(`refuses a report from ${name} with PRODUCT_UNSUPPORTED naming it`, () => {
      const r = parseReport(buildReport({ version: 3, cpuid }));
      assert.throws(
        () => requireSupportedProduct(r),
        (e: unknown) => code('PRODUCT_UNSUPPORTED', new RegExp(`AMD ${line.replace('/', '\\/')} processor .*supported: Milan, Genoa, Turin`))(e) && (e as AttestationError).details.actual === line,
      );
    });
  }
});

describe('parseReport: versions 4 and 5, mitigation vectors, the Turin TCB layout', () => {
  it('version 4 has the version 3 layout: no mitigation vectors, [0x1F8, 0x2A0) reserved', () => {
    const r = parseReport(buildReport({ version: 4, cpuid: [0x19, 0x11, 0x01] }));
    assert.deepEqual([r.version, r.launchMitVector, r.currentMitVector, r.tcbLayout], [4, undefined, undefined, 'legacy']);
    assert.throws(() => parseReport(buildReport({ version: 4, cpuid: [0x19, 0x11, 0x01], launchMit: 1n })), code('REPORT_INVALID', /reserved after LAUNCH_TCB \(offset 0x1f8\)/));
  });

  it('version 5 exposes LAUNCH_MIT_VECTOR (0x1F8) and CURRENT_MIT_VECTOR (0x200); [0x208, 0x2A0) stays reserved', () => {
    const r = parseReport(buildReport({ version: 5, cpuid: [0x19, 0x01, 0x01], launchMit: 0x3fn, currentMit: 0x8000_0000_0000_0001n }));
    assert.deepEqual([r.launchMitVector, r.currentMitVector], [0x3fn, 0x8000_0000_0000_0001n]);
    const b = buildReport({ version: 5, cpuid: [0x19, 0x01, 0x01] });
    b[0x208] = 1;
    assert.throws(() => parseReport(b), (e: unknown) => code('REPORT_INVALID', /reserved after CURRENT_MIT_VECTOR \(offset 0x208\)/)(e) && (e as AttestationError).details.field === 'reserved after CURRENT_MIT_VECTOR');
  });

  it('CPUID family 0x1A (Turin) decodes TCBs with FMC at byte 0 and SNP at byte 3', () => {
    const tcb = { fmc: 1, bootloader: 2, tee: 3, snp: 4, microcode: 0x51 };
    const raw = buildReport({ version: 5, cpuid: [0x1a, 0x02, 0x01], tcb });
    assert.equal(raw.subarray(0x180, 0x188).toString('hex'), '0102030400000051');
    const r = parseReport(raw);
    assert.equal(r.tcbLayout, 'turin');
    for (const t of [r.currentTcb, r.reportedTcb, r.committedTcb, r.launchTcb]) assert.deepEqual(t, tcb);
  });

  it('decodes the real Genoa report (version 3) and the real Turin report (version 5) (testdata/README.md)', () => {
    const genoa = parseReport(golden.genoaReport);
    assert.deepEqual([genoa.version, productLineOf(genoa.cpuid), genoa.tcbLayout, genoa.launchMitVector], [3, 'Genoa', 'legacy', undefined]);
    assert.deepEqual(genoa.reportedTcb, { bootloader: 10, tee: 0, snp: 23, microcode: 84 });
    const turin = parseReport(golden.turinReport);
    assert.deepEqual([turin.version, productLineOf(turin.cpuid), turin.tcbLayout, turin.launchMitVector, turin.currentMitVector], [5, 'Turin', 'turin', 0x3fn, 0x3fn]);
    assert.deepEqual(turin.reportedTcb, { fmc: 1, bootloader: 1, tee: 1, snp: 4, microcode: 81 });
    assert.equal(turin.chipId.subarray(8).every((b) => b === 0), true);
  });
});
