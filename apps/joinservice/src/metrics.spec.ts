import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { CollateralCounts } from '@asterism/validator-sources';
import { JoinMetrics } from './metrics.js';

describe('JoinMetrics', () => {
  it('exports the transport refusals as a counter that follows the source at scrape time', async () => {
    const registry = new Registry();
    const m = new JoinMetrics(registry);
    let refusals: Record<string, number> = { ADDRESS_CONNECTION_LIMIT: 3 };
    m.observeConnectionRefusals(() => refusals);
    assert.match(await registry.metrics(), /joinservice_connections_refused_total\{reason="ADDRESS_CONNECTION_LIMIT"\} 3/);
    refusals = { ADDRESS_CONNECTION_LIMIT: 5, ADDRESS_HANDSHAKE_RATE: 2 };
    const text = await registry.metrics();
    assert.match(text, /joinservice_connections_refused_total\{reason="ADDRESS_CONNECTION_LIMIT"\} 5/);
    assert.match(text, /joinservice_connections_refused_total\{reason="ADDRESS_HANDSHAKE_RATE"\} 2/);
  });
});

describe('JoinMetrics.observeCollateral', () => {
  it('exports collateral lookups and fetches per cache and outcome, following the counts at scrape time', async () => {
    const registry = new Registry();
    const counts = new CollateralCounts();
    new JoinMetrics(registry).observeCollateral(counts);
    counts.lookup('sev-snp-vcek', 'miss');
    counts.fetch('sev-snp-vcek', 'failed');
    assert.match(await registry.metrics(), /joinservice_collateral_lookups_total\{cache="sev-snp-vcek",outcome="miss"\} 1/);
    counts.lookup('sev-snp-vcek', 'hit');
    counts.lookup('sev-snp-vcek', 'hit');
    counts.fetch('sev-snp-vcek', 'failed');
    const text = await registry.metrics();
    assert.match(text, /joinservice_collateral_lookups_total\{cache="sev-snp-vcek",outcome="hit"\} 2/);
    assert.match(text, /joinservice_collateral_lookups_total\{cache="sev-snp-vcek",outcome="miss"\} 1/);
    assert.match(text, /joinservice_collateral_fetches_total\{cache="sev-snp-vcek",outcome="failed"\} 2/);
    counts.risk('certificate-expiry', 'VCEK');
    assert.match(await registry.metrics(), /joinservice_snp_refusal_risks_total\{kind="certificate-expiry",subject="VCEK"\} 1/);
  });
});
