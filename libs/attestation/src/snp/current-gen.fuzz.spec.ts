import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decodeSnpReportRequirements } from '../config/current-gen.js';
import { FieldReader } from '../config/fields.js';
import { AttestationError } from '../errors.js';
import { parseTdxQuote } from '../tdx/quote.js';
import { tdxVector } from '../tdx/vectors.fixture.js';
import { parseSignerCertificate, pemCertificates } from './certs.js';
import { parseReport, REPORT_SIZE, SIGNED_SIZE } from './report.js';
import { buildReport, goldenSnp } from './golden-vectors.fixture.js';

// Fuzzing of the parser paths issue 28 added: report versions 4/5 with mitigation vectors and the
// Turin TCB layout, Turin/Genoa V[CL]EKs (fmcSPL, 8-byte HWID), TD 1.5 quote bodies, and the new
// config keys. Fixed seed; ASTERISM_FUZZ_RUNS sets the count of every property (CI default: 5,000,
// and 500 for certificates, about 4 s in all; the 100,000-input run is
// `npx nx run bench:fuzz-current-gen`).
const RUNS = Number(process.env['ASTERISM_FUZZ_RUNS'] ?? 5_000);
const CERT_RUNS = process.env['ASTERISM_FUZZ_RUNS'] ? RUNS : 500;
const SEED = 0x28_2026;
const golden = goldenSnp();

/** Runs `parse`; only AttestationErrors may escape. Returns the value or undefined. */
function typed<T>(parse: () => T): T | undefined {
  try {
    return parse();
  } catch (e) {
    if (!(e instanceof AttestationError)) throw e;
    return undefined;
  }
}

/** A mutation: up to three byte overwrites, biased to [lo, hi), and a length change. */
const mutation = (size: number, lo: number, hi: number) =>
  fc.record({
    length: fc.oneof(fc.constant(size), fc.integer({ min: 0, max: size + 64 })),
    edits: fc.array(fc.tuple(fc.oneof(fc.integer({ min: lo, max: hi - 1 }), fc.integer({ min: 0, max: size - 1 })), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }),
  });

function mutate(base: Buffer, m: { length: number; edits: [number, number][] }): Buffer {
  const b = Buffer.alloc(m.length);
  base.copy(b, 0, 0, Math.min(m.length, base.length));
  for (const [at, v] of m.edits) if (at < b.length) b[at] = v;
  return b;
}

describe(`fuzzing the current-generation parser paths (${RUNS} inputs each, certificates ${CERT_RUNS}, seed ${SEED})`, () => {
  const reports = [golden.turinReport, golden.genoaReport, buildReport({ version: 4, cpuid: [0x19, 0x11, 0x01] }), buildReport({ version: 5, cpuid: [0x1a, 0x02, 0x01], launchMit: 0x3fn, currentMit: 0x3fn })];

  it('parseReport (v3-v5, Genoa/Turin): only AttestationErrors; a parsed report keeps the version rules', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: reports.length - 1 }), mutation(REPORT_SIZE, 0x180, 0x210), fc.integer({ min: 0, max: 7 }), (which, m, version) => {
        const bytes = mutate(reports[which]!, m);
        if (bytes.length >= 4 && version !== 0) bytes.writeUInt32LE(version, 0);
        const r = typed(() => parseReport(bytes));
        if (!r) return true;
        assert.ok(r.version >= 2 && r.version <= 5);
        assert.equal(r.launchMitVector === undefined, r.version < 5);
        assert.ok(bytes.subarray(r.version < 5 ? 0x1f8 : 0x208, SIGNED_SIZE).every((x) => x === 0));
        assert.equal(r.tcbLayout === 'turin', (r.cpuid?.family ?? 0) >= 0x1a);
        assert.equal(r.reportedTcb.fmc !== undefined, r.tcbLayout === 'turin');
        return true;
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it('parseSignerCertificate (real Turin and Genoa VCEKs, each line): only AttestationErrors; a parsed Turin VCEK has FMC and an 8-byte HWID', () => {
    const ders = [pemCertificates(golden.turinVcekPem, 'VCEK')[0]!, pemCertificates(golden.genoaVcekPem, 'VCEK')[0]!];
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1 }), fc.constantFrom('Milan', 'Genoa', 'Turin'), mutation(1400, 480, 720), (which, line, m) => {
        const cert = typed(() => parseSignerCertificate(mutate(ders[which]!, { ...m, length: Math.min(m.length, ders[which]!.length) }), 'vcek', line));
        if (cert && line === 'Turin') assert.ok(cert.tcb.fmc !== undefined && cert.hwid?.length === 8);
        return true;
      }),
      { numRuns: CERT_RUNS, seed: SEED },
    );
  });

  it('parseTdxQuote (real TD 1.5 quote v5): only AttestationErrors; a parsed type 3 body has TEE_TCB_SVN2 and MRSERVICETD', () => {
    const quote = tdxVector('quote-v5-td15-emr.dat');
    fc.assert(
      fc.property(mutation(quote.length, 48, 720), (m) => {
        const q = typed(() => parseTdxQuote(mutate(quote, m)));
        if (q) assert.equal(q.bodyType === 3, q.body.teeTcbSvn2?.length === 16 && q.body.mrServiceTd?.length === 48);
        return true;
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it('config keys minimumReportVersion / required*Mitigations: only AttestationErrors (CONFIG_INVALID)', () => {
    const hex = fc.array(fc.constantFrom(...'0123456789abcdefABCDEF'), { maxLength: 20 }).map((cs) => `0x${cs.join('')}`);
    const value = fc.oneof(fc.jsonValue(), hex, fc.integer({ min: -3, max: 9 }));
    fc.assert(
      fc.property(value, value, value, (a, b, c) => {
        const got = typed(() => decodeSnpReportRequirements(new FieldReader('aws-sev-snp'), { minimumReportVersion: a, requiredLaunchMitigations: b, requiredCurrentMitigations: c }));
        if (got?.requiredLaunchMitigations !== undefined) assert.ok(got.requiredLaunchMitigations < 1n << 64n);
        return true;
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
