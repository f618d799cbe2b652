import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { NOP_ATTESTATION_LOGGER } from '../interfaces.js';
import { Measurements } from '../measurements/measurements.js';
import { certificateBytes } from './certs.js';
import { SnpCollateral } from './collateral.js';
import { checkReportData } from './checks.js';
import { goldenSnp } from './golden-vectors.fixture.js';
import { snpVerifierFor } from './validator.js';
import type { SnpRefusalRisk, UpcomingTcbMinimum } from './warnings.js';

const golden = goldenSnp();
const runtimeDigest = createHash('sha256').update(golden.runtimeData).digest();
const DAY = 86_400_000;
/** The real VCEK's notAfter. */
const VCEK_EXPIRY = new Date('2030-08-30T12:15:24Z');

/** Verifies the real Azure evidence at `now` with warnings on; returns what the sink received. */
async function risksAt(now: Date, upcomingMinimumTcb?: UpcomingTcbMinimum): Promise<SnpRefusalRisk[]> {
  const risks: SnpRefusalRisk[] = [];
  const v = snpVerifierFor(
    {
      measurements: new Measurements(),
      bootloaderVersion: { value: 2, wantLatest: false },
      teeVersion: { value: 0, wantLatest: false },
      snpVersion: { value: 6, wantLatest: false },
      microcodeVersion: { value: 93, wantLatest: false },
      amdRootKey: certificateBytes(golden.arkPem, 'ARK'),
      amdSigningKey: null,
    },
    { collateral: new SnpCollateral({ offline: true }), now: () => now, warnings: { withinDays: 30, sink: (r) => risks.push(r), ...(upcomingMinimumTcb ? { upcomingMinimumTcb } : {}) } },
    NOP_ATTESTATION_LOGGER,
    { minimumTcb: true },
  );
  await v.verify({ report: golden.azureReport, reportSigner: Buffer.from(golden.vcekPem), certChain: Buffer.from(golden.certChainPem) }, (r) => checkReportData(r, runtimeDigest, 'runtime data'));
  return risks;
}

describe('early refusal warnings on the real Azure evidence (the node still joins)', () => {
  it('nothing to report far from any expiry or TCB change', async () => {
    assert.deepEqual(await risksAt(new Date('2024-06-01T00:00:00Z')), []);
  });

  it('the VCEK expiring within 30 days is reported with the days left', async () => {
    const risks = await risksAt(new Date(VCEK_EXPIRY.getTime() - 10 * DAY - 1000));
    assert.equal(risks.length, 1);
    assert.equal(risks[0]!.kind, 'certificate-expiry');
    assert.equal(risks[0]!.subject, 'VCEK');
    assert.equal(risks[0]!.daysLeft, 10);
    assert.match(risks[0]!.message, /^VCEK SEV-VCEK expires on 2030-08-30T12:15:24.000Z \(10 days\)/);
  });

  it('an upcoming minimum TCB above the node is reported before it takes effect, and refuses after', async () => {
    const now = new Date('2024-06-01T00:00:00Z');
    const upcoming = { tcb: { bootloader: 2, tee: 0, snp: 6, microcode: 115 }, effectiveAt: new Date(now.getTime() + 7 * DAY) };
    const risks = await risksAt(now, upcoming);
    assert.deepEqual(
      risks.map((r) => [r.kind, r.subject, r.daysLeft, r.details['component']]),
      [['tcb-minimum', 'REPORTED_TCB', 7, 'microcode']],
    );
    await assert.rejects(risksAt(new Date(now.getTime() + 8 * DAY), upcoming), (e: unknown) => (e as { code?: string }).code === 'TCB_TOO_LOW');
  });
});
