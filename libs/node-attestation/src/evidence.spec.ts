import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { unmarshalAttestationConfig } from '@asterism/attestation';
import { clusterMarkPcr, parseSummary, type EvidenceSummary } from './evidence.js';
import { checkClusterMark, judgeSummary } from './judge.js';

const ID = Buffer.alloc(32, 1);
const summary = (values: Record<string, string>): EvidenceSummary => ({ variant: 'qemu-vtpm', at: '2026-11-26T12:00:00.000Z', registers: 'PCR', values, akDigest: `sha256:${'cd'.repeat(32)}` });

describe('evidence summaries and the what-if judgement', () => {
  it('parseSummary accepts its own JSON and refuses anything else', () => {
    const s = summary({ '4': '11'.repeat(32) });
    assert.deepEqual(parseSummary(JSON.stringify(s)), s);
    for (const bad of ['', 'x', '{}', JSON.stringify({ ...s, registers: 'X' }), JSON.stringify({ ...s, values: { a: '1' } }), JSON.stringify({ ...s, values: { '4': 'ZZ' } })]) {
      assert.equal(parseSummary(bad), undefined, bad);
    }
  });

  it('the mark is PCR 15 = SHA256(0^32 || SHA256(id)); a wrong or missing mark names PCR[15]', () => {
    assert.equal(checkClusterMark(summary({ '15': clusterMarkPcr(ID).toString('hex') }), ID).ok, true);
    const wrong = checkClusterMark(summary({ '15': '00'.repeat(32) }), ID);
    assert.deepEqual([wrong.ok, wrong.reason, wrong.field], [false, 'ClusterMarkMismatch', 'PCR[15]']);
    assert.equal(checkClusterMark(summary({}), ID).ok, false);
    assert.equal(checkClusterMark({ ...summary({}), registers: 'none', variant: 'dummy' }, ID).ok, true, 'dummy has no register to check');
  });

  it('judgeSummary ignores the config\'s PCR 15 (running nodes carry the mark), names differing PCRs, passes warn-only ones', () => {
    const cfg = (m: Record<string, { expected: string; warnOnly: boolean }>) => unmarshalAttestationConfig(JSON.stringify({ measurements: m }), 'qemu-vtpm');
    const s = summary({ '4': '11'.repeat(32), '9': '22'.repeat(32), '15': clusterMarkPcr(ID).toString('hex') });
    assert.equal(judgeSummary(s, cfg({ '4': { expected: '11'.repeat(32), warnOnly: false }, '15': { expected: '00'.repeat(32), warnOnly: false } })).ok, true);
    const refused = judgeSummary(s, cfg({ '4': { expected: '33'.repeat(32), warnOnly: false }, '9': { expected: '44'.repeat(32), warnOnly: false } }));
    assert.deepEqual([refused.ok, refused.field, refused.message], [false, 'PCR[4],PCR[9]', 'PCR[4], PCR[9] differ']);
    const warned = judgeSummary(s, cfg({ '9': { expected: '44'.repeat(32), warnOnly: true } }));
    assert.equal(warned.ok, true);
    assert.match(warned.message, /PCR\[9\] differ \(warn-only\)/);
    assert.equal(judgeSummary(s, unmarshalAttestationConfig('{}', 'dummy')).field, 'variant');
  });
});
