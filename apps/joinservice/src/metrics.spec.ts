import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
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
