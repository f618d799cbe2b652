import assert from 'node:assert/strict';
import * as fsp from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { makeExtraData } from '../extra-data.js';
import type { Measurement } from '../measurements/measurement.js';
import type { DcapCollateral } from './collateral.js';
import { FakeConfigfsTsm } from '../tsm/configfs-tsm.fixture.js';
import { decodeTdxDocument, encodeTdxDocument, tdMeasurements } from './document.js';
import type { TdxPlatform } from './pcs-collateral.js';
import { QemuTdxIssuer, QemuTdxValidator } from '../variants/qemu-tdx.js';
import { ConfigfsTsmQuoteProvider, type TdxQuoteVerifier } from './quote-provider.js';
import { parseTdxQuote, type TdxQuote } from './quote.js';
import { tdxVector, VECTOR_OFFSETS, VECTOR_TIME, vectorCollateral } from './vectors.fixture.js';

const realQuote = tdxVector('quote-v4-spr.dat');
const realBody = parseTdxQuote(realQuote).body;

/**
 * A configfs-tsm-like directory (tdx_guest) whose firmware answers with the real quote carrying
 * the requested report data (the signature no longer matches, so only the stand-in verifier
 * below accepts it).
 */
function fakeTsm(root: string, raced = false): FakeConfigfsTsm {
  const tsm = new FakeConfigfsTsm(
    root,
    (reportData) => {
      const quote = Buffer.from(realQuote);
      reportData.copy(quote, VECTOR_OFFSETS.reportData);
      return { report: quote, certTable: Buffer.alloc(0) };
    },
    'tdx_guest',
  );
  tsm.raceNext = raced;
  return tsm;
}

/** Accepts any parsed quote (authenticity is DcapVerifier's job, tested on its own). */
const trustingVerifier: TdxQuoteVerifier = {
  verify: (quote: TdxQuote) => ({ quote, fmspc: '50806f000000', pckIssuer: 'Intel SGX PCK Platform CA', tcb: { status: 'UpToDate', platformStatus: 'UpToDate', qeStatus: 'UpToDate', moduleStatus: undefined, tcbDate: '', advisoryIds: [] } }),
};

function collateralSource(seen: TdxPlatform[]) {
  return { collateral: async (p: TdxPlatform): Promise<DcapCollateral> => (seen.push(p), vectorCollateral()) };
}

const expectReal = (): Map<number, Measurement> => new Map([...tdMeasurements(realBody)].map(([i, v]) => [i, { expected: Buffer.from(v), validationOpt: 'Enforce' as const }]));

describe('qemu-tdx issuer (fake configfs-tsm) and validator', () => {
  const root = mkdtempSync(join(tmpdir(), 'asterism-tsm-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const userData = Buffer.from('tls key digest');
  const nonce = Buffer.from('0123456789abcdef0123456789abcdef');

  it('round trip: REPORT_DATA = SHA256(userData||nonce) padded, platform from the PCK, user data returned; the entry is removed', async () => {
    const doc = await new QemuTdxIssuer(new ConfigfsTsmQuoteProvider(root, fakeTsm(root))).issue(userData, nonce);
    const decoded = decodeTdxDocument(doc);
    assert.ok(parseTdxQuote(decoded.rawQuote).body.reportData.equals(Buffer.concat([makeExtraData(userData, nonce), Buffer.alloc(32)])));
    assert.deepEqual(await fsp.readdir(root), []);
    const seen: TdxPlatform[] = [];
    const v = new QemuTdxValidator({ measurements: expectReal(), collateral: collateralSource(seen), verifier: trustingVerifier });
    assert.deepEqual(Buffer.from(await v.validate(doc, nonce)), userData);
    assert.deepEqual(seen, [{ fmspc: '50806f000000', ca: 'platform' }]);
  });

  it('another writer to the configfs entry (generation moved) fails the issuer with ISSUER_FAILED', async () => {
    await assert.rejects(new QemuTdxIssuer(new ConfigfsTsmQuoteProvider(root, fakeTsm(root, true))).issue(userData, nonce), (err: AttestationError) => err.code === 'ISSUER_FAILED');
  });

  const doc = async () => new QemuTdxIssuer(new ConfigfsTsmQuoteProvider(root, fakeTsm(root))).issue(userData, nonce);
  const cases: { name: string; run: () => Promise<unknown>; code: string }[] = [
    { name: 'wrong nonce', run: async () => new QemuTdxValidator({ measurements: expectReal(), collateral: collateralSource([]), verifier: trustingVerifier }).validate(await doc(), Buffer.alloc(32)), code: 'NONCE_MISMATCH' },
    {
      name: 'swapped user data',
      run: async () => {
        const d = decodeTdxDocument(await doc());
        return new QemuTdxValidator({ measurements: expectReal(), collateral: collateralSource([]), verifier: trustingVerifier }).validate(encodeTdxDocument({ ...d, userData: Buffer.from('other key') }), nonce);
      },
      code: 'NONCE_MISMATCH',
    },
    {
      name: 'RTMR2 differs from the expected value (index 3)',
      run: async () => {
        const m = expectReal();
        m.set(3, { expected: Buffer.alloc(48, 7), validationOpt: 'Enforce' });
        return new QemuTdxValidator({ measurements: m, collateral: collateralSource([]), verifier: trustingVerifier }).validate(await doc(), nonce);
      },
      code: 'MEASUREMENT_MISMATCH',
    },
    { name: 'the real DCAP verifier refuses the re-bound quote (signature)', run: async () => new QemuTdxValidator({ measurements: expectReal(), collateral: collateralSource([]), clock: () => VECTOR_TIME }).validate(await doc(), nonce), code: 'QUOTE_SIGNATURE_INVALID' },
    {
      // A replayed genuine quote: REPORT_DATA is checked before DCAP, so no collateral is asked for
      // (the real quote's own verdict, TCB_LEVEL_NOT_FOUND, is in verifier.spec.ts).
      name: 'the real quote replayed (REPORT_DATA binds another nonce), before any collateral lookup',
      run: async () => {
        const seen: TdxPlatform[] = [];
        await new QemuTdxValidator({ measurements: expectReal(), collateral: collateralSource(seen), clock: () => VECTOR_TIME })
          .validate(encodeTdxDocument({ rawQuote: realQuote, userData }), nonce)
          .finally(() => assert.deepEqual(seen, []));
      },
      code: 'NONCE_MISMATCH',
    },
    { name: 'garbled JSON', run: async () => new QemuTdxValidator({ measurements: expectReal(), collateral: collateralSource([]) }).validate(Buffer.from('{"RawQuote":'), nonce), code: 'DOCUMENT_MALFORMED' },
    { name: 'no quote', run: async () => new QemuTdxValidator({ measurements: expectReal(), collateral: collateralSource([]) }).validate(Buffer.from('{"UserData":"AA=="}'), nonce), code: 'QUOTE_MISSING' },
  ];
  for (const c of cases) {
    it(`refuses: ${c.name} -> ${c.code}`, async () => assert.rejects(c.run(), (err: AttestationError) => err instanceof AttestationError && err.code === c.code));
  }

  it('a warn-only RTMR mismatch is logged, not refused', async () => {
    const m = expectReal();
    m.set(4, { expected: Buffer.alloc(48, 9), validationOpt: 'WarnOnly' });
    const warnings: string[] = [];
    const v = new QemuTdxValidator({ measurements: m, collateral: collateralSource([]), verifier: trustingVerifier, logger: { info: () => undefined, warn: (msg) => warnings.push(msg) } });
    await v.validate(await doc(), nonce);
    assert.equal(warnings.length, 1);
  });
});
