import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { TcpReadinessProbe, waitForReachable } from './readiness-probe.js';

describe('TcpReadinessProbe', () => {
  it('says whether something listens on the endpoint (real sockets)', async () => {
    const server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const probe = new TcpReadinessProbe(500);
    const cases: Array<[string, string, boolean]> = [
      ['listening IPv4 port', `127.0.0.1:${port}`, true],
      ['closed port', `127.0.0.1:${port}`, false],
    ];
    for (const [name, endpoint, want] of cases) {
      if (!want) await new Promise<void>((r) => server.close(() => r()));
      assert.equal(await probe.reachable(endpoint), want, name);
    }
    assert.equal(await probe.reachable('[::1]:1'), false, 'bracketed IPv6, nothing listening');
    assert.throws(() => probe.reachable('no-port'), /not host:port/);
  });
});

describe('waitForReachable', () => {
  it('returns the endpoints that answer, re-listing while none does; undefined when stopped', async () => {
    let lists = 0;
    // Nothing listed twice, then three endpoints of which two start answering on the fourth round.
    const list = async () => (++lists < 3 ? [] : ['a:1', 'b:1', 'c:1']);
    const probe = { reachable: async (e: string) => lists >= 4 && e !== 'b:1' };
    assert.deepEqual(await waitForReachable(list, probe, new AbortController().signal, { intervalMs: 1, relistMs: 0 }), ['a:1', 'c:1']);
    assert.equal(lists, 4);
    const stop = new AbortController();
    const waiting = waitForReachable(async () => ['a:1'], { reachable: async () => false }, stop.signal, { intervalMs: 5 });
    setTimeout(() => stop.abort(), 20);
    assert.equal(await waiting, undefined);
  });
});
