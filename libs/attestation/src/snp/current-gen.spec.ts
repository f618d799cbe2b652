import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { SevSnpConfigBase } from '../config/types.js';
import { AttestationError } from '../errors.js';
import { NOP_ATTESTATION_LOGGER } from '../interfaces.js';
import { Measurements } from '../measurements/measurements.js';
import { SignatureMemo } from './chain.js';
import { certificateBytes, parseAmdCertificate, parseSignerCertificate, pemCertificates, type AmdCertificate } from './certs.js';
import type { SnpReportPolicy } from './checks.js';
import { SnpCollateral } from './collateral.js';
import type { AmdProductLine } from './lines.js';
import { buildReport, CURRENT_GEN_VECTOR_TIME, goldenSnp, signReport, TestAmdRoot, type ReportFields } from './golden-vectors.fixture.js';
import { snpVerifierFor } from './validator.js';
import { SnpVerifier, type SnpAnchor, type SnpEvidence } from './verifier.js';

// Real Genoa (report version 3) and Turin (version 5) evidence with AMD's real certificates
// (testdata/README.md), then version 4 and 5 reports re-signed under stand-in AMD hierarchies.
const golden = goldenSnp();
const cert = (pem: string, what: string) => parseAmdCertificate(pemCertificates(pem, what)[0]!, what);
const realArk: Record<'Genoa' | 'Turin', AmdCertificate> = { Genoa: cert(golden.genoaArkPem, 'ARK'), Turin: cert(golden.turinArkPem, 'ARK') };
const OPEN: SnpReportPolicy = { vmpl: 0, minimumTcb: undefined, minimumLaunchTcb: undefined, permitProvisionalFirmware: true };
const anyBinding = () => undefined;

function verifierFor(ark: AmdCertificate, policy: Partial<SnpReportPolicy> = {}, at = CURRENT_GEN_VECTOR_TIME, others: AmdCertificate[] = []): SnpVerifier {
  const memo = new SignatureMemo();
  const now = () => at;
  const collateral = new SnpCollateral({ offline: true });
  const otherLines: SnpAnchor[] = others.map((a) => ({ ark: a, collateral: collateral.views(a, memo, now) }));
  return new SnpVerifier({ ark, memo, now, logger: NOP_ATTESTATION_LOGGER, policy: { ...OPEN, ...policy }, collateral: collateral.views(ark, memo, now), otherLines });
}

/** The verdict: the product line when verified, else the error code. */
async function outcome(v: SnpVerifier, e: SnpEvidence): Promise<string> {
  try {
    return (await v.verify(e, anyBinding)).productLine;
  } catch (err) {
    if (err instanceof AttestationError) return err.code;
    throw err;
  }
}

const realEvidence = (line: 'Genoa' | 'Turin', report?: Buffer): SnpEvidence => ({
  report: report ?? (line === 'Genoa' ? golden.genoaReport : golden.turinReport),
  reportSigner: Buffer.from(line === 'Genoa' ? golden.genoaVcekPem : golden.turinVcekPem),
  certChain: Buffer.from(line === 'Genoa' ? golden.genoaAskPem : golden.turinAskPem),
});

const patched = (base: Buffer, edit: (b: Buffer) => void) => {
  const b = Buffer.from(base);
  edit(b);
  return b;
};

describe('real current-generation SEV-SNP evidence (AMD-signed)', () => {
  it('the real Turin VCEK carries fmcSPL and an 8-byte HWID; the Genoa VCEK a 64-byte HWID', () => {
    const turin = parseSignerCertificate(golden.turinVcekPem, 'vcek', 'Turin');
    assert.deepEqual([turin.tcb, turin.hwid?.length, turin.productName], [{ fmc: 1, bootloader: 1, tee: 1, snp: 4, microcode: 81 }, 8, 'Turin']);
    assert.equal(parseSignerCertificate(golden.genoaVcekPem, 'vcek', 'Genoa').hwid?.length, 64);
    assert.throws(() => parseSignerCertificate(golden.turinVcekPem, 'vcek', 'Milan'), (e: AttestationError) => e.code === 'CERT_INVALID' && e.details.field === 'issuer');
  });

  it('the real Genoa report (version 3) verifies under ARK-Genoa; the real Turin report (version 5) under ARK-Turin', async () => {
    assert.equal(await outcome(verifierFor(realArk.Genoa), realEvidence('Genoa')), 'Genoa');
    const v = await verifierFor(realArk.Turin).verify(realEvidence('Turin'), anyBinding);
    assert.deepEqual([v.productLine, v.report.version, v.report.launchMitVector, v.signer.tcb.fmc], ['Turin', 5, 0x3fn, 1]);
  });

  it('a verifier with only ARK-Genoa refuses Turin evidence (PRODUCT_UNSUPPORTED); with both anchors it verifies', async () => {
    assert.equal(await outcome(verifierFor(realArk.Genoa), realEvidence('Turin')), 'PRODUCT_UNSUPPORTED');
    assert.equal(await outcome(verifierFor(realArk.Genoa, {}, CURRENT_GEN_VECTOR_TIME, [realArk.Turin]), realEvidence('Turin')), 'Turin');
  });

  const turinTampers: { name: string; edit: (b: Buffer) => void; policy?: Partial<SnpReportPolicy>; code: string }[] = [
    { name: 'REPORTED_TCB FMC (byte 0)', edit: (b) => (b[0x180] = 2), code: 'TCB_MISMATCH' },
    { name: 'REPORTED_TCB SNP (Turin byte 3)', edit: (b) => (b[0x183] = 5), code: 'TCB_MISMATCH' },
    { name: 'CHIP_ID within the 8-byte HWID', edit: (b) => (b[0x1a0]! ^= 1), code: 'CHIP_ID_MISMATCH' },
    { name: 'CHIP_ID beyond the 8-byte HWID', edit: (b) => (b[0x1a8] = 1), code: 'CHIP_ID_MISMATCH' },
    { name: 'LAUNCH_MIT_VECTOR bit 0 cleared, bits 0-5 required', edit: (b) => (b[0x1f8] = 0x3e), policy: { requiredLaunchMitigations: 0x3fn }, code: 'MITIGATION_MISSING' },
    { name: 'CURRENT_MIT_VECTOR bit 5 cleared, bits 0-5 required', edit: (b) => (b[0x200] = 0x1f), policy: { requiredCurrentMitigations: 0x3fn }, code: 'MITIGATION_MISSING' },
    { name: 'LAUNCH_MIT_VECTOR bit 0 cleared, nothing required', edit: (b) => (b[0x1f8] = 0x3e), code: 'REPORT_SIGNATURE_INVALID' },
    { name: 'version 5 -> 4 (the vectors become reserved bytes)', edit: (b) => (b[0] = 4), code: 'REPORT_INVALID' },
    { name: 'reserved byte after CURRENT_MIT_VECTOR', edit: (b) => (b[0x208] = 1), code: 'REPORT_INVALID' },
    { name: 'CPUID claims Milan (family 0x19 model 1)', edit: (b) => b.set([0x19, 0x01], 0x188), code: 'PRODUCT_UNSUPPORTED' },
    { name: 'CPUID claims an unknown Zen 5 model', edit: (b) => (b[0x189] = 0x50), code: 'PRODUCT_UNSUPPORTED' },
    { name: 'MEASUREMENT', edit: (b) => (b[0x90]! ^= 1), code: 'REPORT_SIGNATURE_INVALID' },
  ];
  for (const t of turinTampers) {
    it(`the real Turin report with a tampered ${t.name} is refused with ${t.code}`, async () => {
      assert.equal(await outcome(verifierFor(realArk.Turin, t.policy), realEvidence('Turin', patched(golden.turinReport, t.edit))), t.code);
    });
  }

  it('configured requirements the real reports meet pass: minimum version 5 and mitigation bits 0-5 on Turin', async () => {
    assert.equal(await outcome(verifierFor(realArk.Turin, { minimumReportVersion: 5, requiredLaunchMitigations: 0x3fn, requiredCurrentMitigations: 0x3fn }), realEvidence('Turin')), 'Turin');
  });

  it('the real Genoa report (version 3) fails a minimum report version 4 with REPORT_VERSION_TOO_LOW, and any required mitigation with MITIGATION_MISSING', async () => {
    assert.equal(await outcome(verifierFor(realArk.Genoa, { minimumReportVersion: 4 }), realEvidence('Genoa')), 'REPORT_VERSION_TOO_LOW');
    await assert.rejects(
      verifierFor(realArk.Genoa, { requiredLaunchMitigations: 1n }).verify(realEvidence('Genoa'), anyBinding),
      (e: AttestationError) => e.code === 'MITIGATION_MISSING' && e.details.actual === null && /absent \(report version 3 < 5\)/.test(e.message),
    );
  });

  it('certificate validity on the real chain: "not yet valid" before the VCEK is issued, "expired" after, both dates', async () => {
    await assert.rejects(
      verifierFor(realArk.Turin, {}, new Date('2025-01-01T00:00:00Z')).verify(realEvidence('Turin'), anyBinding),
      (e: AttestationError) => e.code === 'CERT_EXPIRED' && e.details.state === 'not yet valid' && e.details.notBefore === '2026-02-05T01:04:33.000Z' && /is not yet valid at 2025/.test(e.message),
    );
    await assert.rejects(
      verifierFor(realArk.Turin, {}, new Date('2040-01-01T00:00:00Z')).verify(realEvidence('Turin'), anyBinding),
      (e: AttestationError) => e.code === 'CERT_EXPIRED' && e.details.state === 'expired' && e.details.notAfter === '2033-02-05T01:04:33.000Z',
    );
  });
});

describe('snpVerifierFor: the configured ARK anchors its line, AMD\'s embedded ARKs the others; config requirements apply', () => {
  const config = (extra: Partial<SevSnpConfigBase> = {}): SevSnpConfigBase => ({
    measurements: new Measurements(),
    bootloaderVersion: { value: 1, wantLatest: false },
    teeVersion: { value: 0, wantLatest: false },
    snpVersion: { value: 4, wantLatest: false },
    microcodeVersion: { value: 81, wantLatest: false },
    amdRootKey: null,
    amdSigningKey: null,
    ...extra,
  });
  const deps = () => ({ collateral: new SnpCollateral({ offline: true }), now: () => CURRENT_GEN_VECTOR_TIME });
  const run = async (cfg: SevSnpConfigBase, line: 'Genoa' | 'Turin') => {
    try {
      return (await snpVerifierFor(cfg, deps(), NOP_ATTESTATION_LOGGER, { minimumTcb: false }).verify(realEvidence(line), anyBinding)).productLine;
    } catch (err) {
      if (err instanceof AttestationError) return err.code;
      throw err;
    }
  };

  it('the default config (ARK-Milan) verifies the real Genoa and Turin evidence through the embedded ARK-Genoa / ARK-Turin', async () => {
    assert.deepEqual([await run(config(), 'Genoa'), await run(config(), 'Turin')], ['Genoa', 'Turin']);
  });

  it('amdRootKey ARK-Turin with amdSigningKey SEV-Turin verifies Turin evidence; a foreign ARK-Turin refuses it', async () => {
    const turin = config({ amdRootKey: certificateBytes(golden.turinArkPem, 'ARK'), amdSigningKey: certificateBytes(golden.turinAskPem, 'ASK') });
    assert.equal(await run(turin, 'Turin'), 'Turin');
    const foreign = await TestAmdRoot.create(undefined, undefined, 'Turin');
    assert.equal(await run(config({ amdRootKey: foreign.ark.der }), 'Turin'), 'CERT_CHAIN_INVALID');
  });

  it('minimumReportVersion and the mitigation masks of the config reach the verifier', async () => {
    assert.equal(await run(config({ minimumReportVersion: 5 }), 'Genoa'), 'REPORT_VERSION_TOO_LOW');
    assert.equal(await run(config({ minimumReportVersion: 5, requiredLaunchMitigations: 0x3fn, requiredCurrentMitigations: 0x3fn }), 'Turin'), 'Turin');
    assert.equal(await run(config({ requiredCurrentMitigations: 0x40n }), 'Turin'), 'MITIGATION_MISSING');
  });

  it('a config minimum TCB above the Turin launch TCB is TCB_TOO_LOW (the four config versions on the Turin layout)', async () => {
    assert.equal(await run(config({ microcodeVersion: { value: 82, wantLatest: false } }), 'Turin'), 'TCB_TOO_LOW');
  });
});

describe('version 4 and 5 reports re-signed under stand-in AMD hierarchies (Milan, Genoa, Turin)', () => {
  const roots = new Map<AmdProductLine, TestAmdRoot>();
  before(async () => {
    for (const line of ['Milan', 'Genoa', 'Turin'] as const) roots.set(line, await TestAmdRoot.create(undefined, undefined, line));
  });
  const cpuidOf: Record<AmdProductLine, [number, number, number]> = { Milan: [0x19, 0x01, 0x01], Genoa: [0x19, 0x11, 0x01], Turin: [0x1a, 0x02, 0x01] };
  const chip = (line: AmdProductLine) => (line === 'Turin' ? Buffer.concat([Buffer.alloc(8, 0xcd), Buffer.alloc(56)]) : Buffer.alloc(64, 0xcd));
  const tcbOf = (line: AmdProductLine) => (line === 'Turin' ? { fmc: 2, bootloader: 3, tee: 1, snp: 5, microcode: 0x4b } : { bootloader: 9, tee: 0, snp: 23, microcode: 72 });

  async function signed(line: AmdProductLine, fields: ReportFields, edit: (b: Buffer) => void = () => undefined): Promise<{ evidence: SnpEvidence; verifier: (p?: Partial<SnpReportPolicy>) => SnpVerifier }> {
    const root = roots.get(line)!;
    const vcek = await root.issue('vcek', { tcb: tcbOf(line), chipId: chip(line) });
    const report = buildReport({ cpuid: cpuidOf[line], tcb: tcbOf(line), chipId: chip(line), ...fields });
    edit(report);
    const ark = parseAmdCertificate(root.ark.der, 'ARK');
    return { evidence: { report: signReport(report, vcek.privateKey), reportSigner: Buffer.from(vcek.pem), certChain: Buffer.from(root.chainPem('vcek')) }, verifier: (p) => verifierFor(ark, p, new Date()) };
  }

  for (const line of ['Milan', 'Genoa', 'Turin'] as const) {
    for (const version of [4, 5]) {
      it(`${line} report version ${version} verifies`, async () => {
        const { evidence, verifier } = await signed(line, { version, ...(version === 5 ? { launchMit: 0x7n, currentMit: 0xfn } : {}) });
        const v = await verifier().verify(evidence, anyBinding);
        assert.deepEqual([v.productLine, v.report.version, v.report.currentMitVector], [line, version, version === 5 ? 0xfn : undefined]);
      });
    }
  }

  const tampers: { name: string; line: AmdProductLine; fields?: ReportFields; edit?: (b: Buffer) => void; policy?: Partial<SnpReportPolicy>; code: string }[] = [
    { name: 'Turin v5 launch vector missing bit 3', line: 'Turin', fields: { version: 5, launchMit: 0x7n, currentMit: 0xfn }, policy: { requiredLaunchMitigations: 0x8n }, code: 'MITIGATION_MISSING' },
    { name: 'Genoa v5 current vector missing bit 4', line: 'Genoa', fields: { version: 5, launchMit: 0x7n, currentMit: 0xfn }, policy: { requiredCurrentMitigations: 0x10n }, code: 'MITIGATION_MISSING' },
    { name: 'Milan v4 below a minimum version 5', line: 'Milan', fields: { version: 4 }, policy: { minimumReportVersion: 5 }, code: 'REPORT_VERSION_TOO_LOW' },
    { name: 'Genoa v4 with a set byte in the reserved 0x1F8 area', line: 'Genoa', fields: { version: 4 }, edit: (b) => (b[0x1f9] = 1), code: 'REPORT_INVALID' },
    { name: 'Turin v5 with a reserved byte at 0x208', line: 'Turin', fields: { version: 5 }, edit: (b) => (b[0x20f] = 1), code: 'REPORT_INVALID' },
    { name: 'Turin v5 with CURRENT_TCB FMC below the VCEK', line: 'Turin', fields: { version: 5, currentTcb: { fmc: 1, bootloader: 3, tee: 1, snp: 5, microcode: 0x4b } }, code: 'TCB_TOO_LOW' },
    { name: 'Turin v5 with LAUNCH_TCB FMC below the configured minimum', line: 'Turin', fields: { version: 5 }, policy: { minimumLaunchTcb: { fmc: 3, bootloader: 0, tee: 0, snp: 0, microcode: 0 } }, code: 'TCB_TOO_LOW' },
  ];
  for (const t of tampers) {
    it(`refuses ${t.name} with ${t.code}`, async () => {
      const { evidence, verifier } = await signed(t.line, t.fields ?? {}, t.edit);
      assert.equal(await outcome(verifier(t.policy), evidence), t.code);
    });
  }
});
