import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, describe, it } from 'node:test';
import type { SevSnpConfigBase } from '../config/types.js';
import { AttestationError } from '../errors.js';
import { NOP_ATTESTATION_LOGGER } from '../interfaces.js';
import { Measurements } from '../measurements/measurements.js';
import { SignatureMemo } from './chain.js';
import { certificateBytes, parseAmdCertificate, parseSignerCertificate, pemCertificates, type AmdCertificate } from './certs.js';
import { checkReportAgainstSigner, checkReportClaims, checkReportData, type SnpReportPolicy } from './checks.js';
import { SnpCollateral } from './collateral.js';
import { parseReport } from './report.js';
import { verifyReportSignature } from './signature.js';
import { AZURE_VECTOR_TIME, goldenSnp, TestAmdRoot } from './golden-vectors.fixture.js';
import { snpVerifierFor } from './validator.js';
import { SnpVerifier, type SnpEvidence } from './verifier.js';

const golden = goldenSnp();
const goldenArk = parseAmdCertificate(pemCertificates(golden.arkPem, 'ARK')[0]!, 'ARK');
/** Azure binds SHA-256 of the HCL runtime data into the first half of REPORT_DATA. */
const runtimeDigest = createHash('sha256').update(golden.runtimeData).digest();
/** The real report's TCBs (all four equal): bl2 tee0 snp6 ucode93. */
const REAL_TCB = { bootloader: 2, tee: 0, snp: 6, microcode: 93 };
/** What the azure-sev-snp validator enforces with a config at the real report's versions. */
const AZURE_POLICY: SnpReportPolicy = { vmpl: 0, minimumTcb: REAL_TCB, minimumLaunchTcb: REAL_TCB, permitProvisionalFirmware: true };

/** A verifier over the golden vectors at the pinned time, offline (no KDS), with `ark` as trust anchor. */
function verifier(ark: AmdCertificate, policy: SnpReportPolicy = AZURE_POLICY): SnpVerifier {
  const memo = new SignatureMemo();
  const now = () => AZURE_VECTOR_TIME;
  const collateral = new SnpCollateral({ offline: true });
  return new SnpVerifier({ ark, memo, now, logger: NOP_ATTESTATION_LOGGER, policy, collateral: collateral.views(ark, memo, now) });
}

function evidence(report: Buffer): SnpEvidence {
  return { report, reportSigner: Buffer.from(golden.vcekPem), certChain: Buffer.from(golden.certChainPem) };
}

const bindRuntimeData = (r: Parameters<typeof checkReportData>[0]) => checkReportData(r, runtimeDigest, 'the SHA-256 of the HCL runtime data');

/** Flips `mask` in the byte at `offset` of a copy of the real report. */
const flip = (offset: number, mask = 0x01) => (b: Buffer) => {
  b[offset]! ^= mask;
};

interface TamperCase {
  readonly name: string;
  /** Changes the real report's bytes (none: the real report). */
  readonly tamper?: (b: Buffer) => void;
  readonly policy?: Partial<SnpReportPolicy>;
  /** true: a freshly generated self-signed ARK-Milan replaces the real one. */
  readonly wrongArk?: boolean;
  readonly code: string;
  readonly message: RegExp;
  readonly details: Record<string, unknown>;
}

// Offsets: docs/protocol/sev-snp.md (report layout). The verifier judges the claims before the
// signature, so none of these tampers is reported as a signature failure: each gets its own code.
const cases: TamperCase[] = [
  {
    name: 'one bit of the signature R',
    tamper: flip(0x2a0),
    code: 'REPORT_SIGNATURE_INVALID',
    message: /VCEK/,
    details: {},
  },
  {
    name: 'one bit of REPORT_DATA (no longer the runtime-data digest)',
    tamper: flip(0x50),
    code: 'REPORT_DATA_MISMATCH',
    message: /REPORT_DATA does not match the SHA-256 of the HCL runtime data/,
    details: { field: 'reportData', expected: runtimeDigest.toString('hex') },
  },
  {
    name: 'a REPORTED_TCB byte (microcode 93 -> 92) differs from the VCEK TCB',
    tamper: flip(0x180 + 7),
    code: 'TCB_MISMATCH',
    message: /^REPORTED_TCB bl2 tee0 snp6 ucode92 does not match the TCB of the VCEK certificate bl2 tee0 snp6 ucode93 \(microcode: 92 vs 93\)$/,
    details: { field: 'REPORTED_TCB', component: 'microcode', expected: 93, actual: 92 },
  },
  {
    name: 'a CURRENT_TCB byte (bootloader 2 -> 0) below the VCEK TCB',
    tamper: flip(0x38, 0x02),
    code: 'TCB_TOO_LOW',
    message: /^CURRENT_TCB bl0 tee0 snp6 ucode93 is lower than the TCB of the V\[CL\]EK certificate bl2 tee0 snp6 ucode93 \(bootloader: 0 vs 2\)$/,
    details: { field: 'CURRENT_TCB', component: 'bootloader', expected: 2, actual: 0 },
  },
  {
    name: 'a COMMITTED_TCB byte (snp 6 -> 7) above CURRENT_TCB',
    tamper: flip(0x1e0 + 6),
    code: 'TCB_TOO_LOW',
    message: /^CURRENT_TCB bl2 tee0 snp6 ucode93 is lower than the report's COMMITTED_TCB bl2 tee0 snp7 ucode93 \(snp: 6 vs 7\)$/,
    details: { field: 'CURRENT_TCB', component: 'snp', expected: 7, actual: 6 },
  },
  {
    name: 'a LAUNCH_TCB byte (microcode 93 -> 92) below the minimum launch TCB',
    tamper: flip(0x1f0 + 7),
    code: 'TCB_TOO_LOW',
    message: /^LAUNCH_TCB bl2 tee0 snp6 ucode92 is lower than the policy minimum launch TCB bl2 tee0 snp6 ucode93 \(microcode: 92 vs 93\)$/,
    details: { field: 'LAUNCH_TCB', component: 'microcode', expected: 93, actual: 92 },
  },
  {
    name: 'VMPL 1 where VMPL 0 is required',
    tamper: flip(0x30, 0x01),
    code: 'VMPL_MISMATCH',
    message: /^report VMPL 1 is not 0$/,
    details: { field: 'vmpl', expected: 0, actual: 1 },
  },
  {
    name: 'the guest policy debug bit (bit 19) set',
    tamper: flip(0x08 + 2, 0x08),
    code: 'POLICY_VIOLATION',
    message: /^report guest policy 0xb001f allows debugging, which is not permitted$/,
    details: { field: 'policy.debug', expected: false, actual: true, policy: '0xb001f' },
  },
  {
    name: 'CHIP_ID not matching the HWID of the VCEK',
    tamper: flip(0x1a0),
    code: 'CHIP_ID_MISMATCH',
    message: /^report CHIP_ID 9f44aaef[0-9a-f]+ does not match the HWID of the VCEK certificate 9e44aaef[0-9a-f]+$/,
    details: { field: 'chipId' },
  },
  {
    name: 'a wrong ARK (freshly generated, self-signed ARK-Milan) as trust anchor',
    wrongArk: true,
    code: 'CERT_CHAIN_INVALID',
    message: /^ASK SEV-Milan is not signed by the configured ARK ARK-Milan \(fingerprint [0-9a-f:]+\)$/i,
    details: { certificate: 'ASK', signer: 'configured ARK' },
  },
  {
    name: 'minimum TCB above the report (microcode 94 > 93)',
    policy: { minimumTcb: { ...REAL_TCB, microcode: 94 } },
    code: 'TCB_TOO_LOW',
    message: /^CURRENT_TCB bl2 tee0 snp6 ucode93 is lower than the policy minimum TCB bl2 tee0 snp6 ucode94 \(microcode: 93 vs 94\)$/,
    details: { field: 'CURRENT_TCB', component: 'microcode', expected: 94, actual: 93 },
  },
  {
    name: 'minimum launch TCB above the report (bootloader 3 > 2)',
    policy: { minimumLaunchTcb: { ...REAL_TCB, bootloader: 3 } },
    code: 'TCB_TOO_LOW',
    message: /^LAUNCH_TCB bl2 tee0 snp6 ucode93 is lower than the policy minimum launch TCB bl3 tee0 snp6 ucode93 \(bootloader: 2 vs 3\)$/,
    details: { field: 'LAUNCH_TCB', component: 'bootloader', expected: 3, actual: 2 },
  },
  {
    name: 'provisional firmware not permitted and COMMITTED_TCB (snp 6 -> 7) differing from CURRENT_TCB',
    tamper: flip(0x1e0 + 6),
    policy: { permitProvisionalFirmware: false },
    code: 'TCB_MISMATCH',
    message: /^CURRENT_TCB bl2 tee0 snp6 ucode93 does not match the report's COMMITTED_TCB \(provisional firmware is not permitted\) bl2 tee0 snp7 ucode93 \(snp: 6 vs 7\)$/,
    details: { field: 'CURRENT_TCB', component: 'snp', expected: 7, actual: 6 },
  },
];

describe('SnpVerifier: the real Azure report, VCEK and ASK/ARK at a pinned time', () => {
  let wrongArk: AmdCertificate;
  before(async () => {
    const fresh = await TestAmdRoot.create(new Date('2020-01-01T00:00:00Z'), new Date('2040-01-01T00:00:00Z'));
    wrongArk = parseAmdCertificate(certificateBytes(fresh.ark.pem, 'ARK'), 'ARK');
  });

  it('accepts the untampered evidence (every stage, the signature included)', async () => {
    const v = await verifier(goldenArk).verify(evidence(Buffer.from(golden.azureReport)), bindRuntimeData);
    assert.deepEqual(v.report.reportedTcb, REAL_TCB);
    assert.equal(v.signer.kind, 'vcek');
    assert.equal(v.ask.subjectCn, 'SEV-Milan');
    assert.equal(v.verifiedAt, AZURE_VECTOR_TIME);
  });

  for (const c of cases) {
    it(`refuses ${c.name} with ${c.code}`, async () => {
      const bytes = Buffer.from(golden.azureReport);
      c.tamper?.(bytes);
      const v = verifier(c.wrongArk ? wrongArk : goldenArk, { ...AZURE_POLICY, ...c.policy });
      await assert.rejects(v.verify(evidence(bytes), bindRuntimeData), (e: unknown) => {
        assert.ok(e instanceof AttestationError, `not an AttestationError: ${String(e)}`);
        assert.equal(e.code, c.code, e.message);
        assert.match(e.message, c.message);
        for (const [k, want] of Object.entries(c.details)) assert.deepEqual(e.details[k], want, `details.${k}`);
        return true;
      });
      // A byte tamper also breaks the report signature: the verifier's own code came first.
      if (c.tamper) {
        const vcek = parseSignerCertificate(golden.vcekPem, 'vcek');
        assert.throws(() => verifyReportSignature(parseReport(bytes), vcek.publicKey, 'VCEK'), (e: unknown) => e instanceof AttestationError && e.code === 'REPORT_SIGNATURE_INVALID');
      }
    });
  }
});

describe('SNP check functions on the real Azure report: each check can fail on its own', () => {
  const report = parseReport(golden.azureReport);
  const vcek = parseSignerCertificate(golden.vcekPem, 'vcek');
  const code = (c: string, re: RegExp) => (e: unknown) => e instanceof AttestationError && e.code === c && re.test(e.message);

  it('the real report passes checkReportAgainstSigner, checkReportData and checkReportClaims', () => {
    checkReportAgainstSigner(report, vcek);
    bindRuntimeData(report);
    checkReportClaims(report, AZURE_POLICY);
  });

  const ucode94 = { ...REAL_TCB, microcode: 94 };
  const claimCases: Array<[string, Partial<typeof report>, Partial<SnpReportPolicy>, string, RegExp]> = [
    ['VMPL 2', { vmpl: 2 }, {}, 'VMPL_MISMATCH', /^report VMPL 2 is not 0$/],
    ['the debug policy bit', { policy: { ...report.policy, debug: true } }, {}, 'POLICY_VIOLATION', /allows debugging/],
    ['the migration agent policy bit', { policy: { ...report.policy, migrateMa: true } }, {}, 'POLICY_VIOLATION', /allows a migration agent/],
    ['COMMITTED_TCB alone below the minimum TCB', { currentTcb: ucode94, reportedTcb: ucode94 }, { minimumTcb: ucode94 }, 'TCB_TOO_LOW', /^COMMITTED_TCB .* policy minimum TCB .* \(microcode: 93 vs 94\)$/],
    ['REPORTED_TCB alone below the minimum TCB', { currentTcb: ucode94, committedTcb: ucode94 }, { minimumTcb: ucode94 }, 'TCB_TOO_LOW', /^REPORTED_TCB .* policy minimum TCB .* \(microcode: 93 vs 94\)$/],
  ];
  for (const [name, change, policy, c, re] of claimCases) {
    it(`checkReportClaims refuses ${name} with ${c}`, () => {
      assert.throws(() => checkReportClaims({ ...report, ...change }, { ...AZURE_POLICY, ...policy }), code(c, re));
    });
  }

  it('checkReportAgainstSigner refuses a masked-chip report only on TCB, not on CHIP_ID', () => {
    const masked = { ...report, maskChipKey: true, chipId: Buffer.alloc(64, 0x55) };
    checkReportAgainstSigner(masked, vcek);
    assert.throws(() => checkReportAgainstSigner({ ...masked, reportedTcb: { ...REAL_TCB, snp: 7 } }, vcek), code('TCB_MISMATCH', /snp: 7 vs 6/));
  });
});

describe('snpVerifierFor: the config versions reach the verifier (real Azure evidence, pinned time)', () => {
  const config = (microcode: number): SevSnpConfigBase => ({
    measurements: new Measurements(),
    bootloaderVersion: { value: 2, wantLatest: false },
    teeVersion: { value: 0, wantLatest: false },
    snpVersion: { value: 6, wantLatest: false },
    microcodeVersion: { value: microcode, wantLatest: false },
    amdRootKey: certificateBytes(golden.arkPem, 'ARK'),
    amdSigningKey: null,
  });
  const deps = { collateral: new SnpCollateral({ offline: true }), now: () => AZURE_VECTOR_TIME };

  for (const minimumTcb of [true, false]) {
    it(`${minimumTcb ? 'azure' : 'aws/gcp'} policy: accepts the real report at its own versions, refuses microcodeVersion 94 with TCB_TOO_LOW`, async () => {
      const ok = snpVerifierFor(config(93), deps, NOP_ATTESTATION_LOGGER, { minimumTcb });
      await ok.verify(evidence(Buffer.from(golden.azureReport)), bindRuntimeData);
      const high = snpVerifierFor(config(94), deps, NOP_ATTESTATION_LOGGER, { minimumTcb });
      await assert.rejects(high.verify(evidence(Buffer.from(golden.azureReport)), bindRuntimeData), (e: unknown) => {
        assert.ok(e instanceof AttestationError);
        assert.equal(e.code, 'TCB_TOO_LOW');
        assert.match(e.message, /^LAUNCH_TCB bl2 tee0 snp6 ucode93 is lower than the policy minimum launch TCB bl2 tee0 snp6 ucode94 \(microcode: 93 vs 94\)$/);
        return true;
      });
    });
  }
});
