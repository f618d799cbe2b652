import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EvidenceSummary } from './evidence.js';
import { awaitingRejoin } from './judge.js';
import type { Verdict } from './verdict.js';

const AK = `sha256:${'ab'.repeat(32)}`;
const evidence = (mark: string, akDigest = AK, registers: EvidenceSummary['registers'] = 'PCR'): EvidenceSummary => ({
  variant: registers === 'TD' ? 'qemu-tdx' : 'qemu-vtpm',
  at: '2026-11-26T12:00:00.000Z',
  registers,
  values: { [registers === 'TD' ? '3' : '15']: mark, '9': '11'.repeat(32) },
  akDigest,
});
const refused = (e: EvidenceSummary, reason: Verdict['reason'] = 'ClusterMarkMismatch'): Verdict => ({ node: 'worker-0', status: 'Refused', reason, message: '', at: new Date(), latencyMs: 1, evidence: e });
const UNMARKED = '00'.repeat(32);
const last = evidence('cd'.repeat(32));

describe('awaitingRejoin (readmit of a rebooted node)', () => {
  it('accepts only the missing mark of the same attestation key', () => {
    assert.equal(awaitingRejoin(refused(evidence(UNMARKED)), last), true);
    assert.equal(awaitingRejoin(refused(evidence(UNMARKED, `sha256:${'ef'.repeat(32)}`)), last), false, 'another machine');
    assert.equal(awaitingRejoin(refused(evidence('99'.repeat(32))), last), false, 'marked by another cluster');
    assert.equal(awaitingRejoin(refused(evidence(UNMARKED), 'MeasurementMismatch'), last), false, 'measurements failed');
    assert.equal(awaitingRejoin(refused(evidence(UNMARKED)), undefined), false, 'no evidence to compare the key with');
  });

  it('reads RTMR2 on TDX (index 3) and never accepts AK-less variants', () => {
    assert.equal(awaitingRejoin(refused(evidence('00'.repeat(48), AK, 'TD')), last), true);
    const none = evidence(UNMARKED, 'none:qemu-vtpm');
    assert.equal(awaitingRejoin(refused(none), { ...last, akDigest: 'none:qemu-vtpm' }), false);
  });
});
