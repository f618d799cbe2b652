import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { MetadataError } from '../types.js';
import { MetadataHttp } from './metadata-http.js';

/** A fetch answering from a list of statuses (then 200 "ok"), recording calls. */
function scripted(statuses: number[]) {
  const calls: string[] = [];
  const fetchImpl = (async (url: string) => {
    calls.push(url);
    const s = statuses.shift() ?? 200;
    return new Response(s === 200 ? 'ok' : `status ${s}`, { status: s });
  }) as unknown as typeof fetch;
  return { calls, fetchImpl };
}

describe('MetadataHttp retries and errors', () => {
  const cases: { name: string; statuses: number[]; attempts: number; want: string | { code: string; calls: number } }[] = [
    { name: '200 at once', statuses: [], attempts: 3, want: 'ok' },
    { name: '503, 503, then 200', statuses: [503, 503], attempts: 3, want: 'ok' },
    { name: '429 is retried', statuses: [429], attempts: 3, want: 'ok' },
    { name: '500 three times exhausts the attempts', statuses: [500, 500, 500], attempts: 3, want: { code: 'METADATA_UNAVAILABLE', calls: 3 } },
    { name: '404 is not retried', statuses: [404], attempts: 3, want: { code: 'METADATA_NOT_FOUND', calls: 1 } },
    { name: '403 is not retried', statuses: [403], attempts: 3, want: { code: 'METADATA_UNAVAILABLE', calls: 1 } },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { calls, fetchImpl } = scripted([...c.statuses]);
      const waits: number[] = [];
      const http = new MetadataHttp({ baseUrl: 'http://md/', cloud: 'AWS', service: 'IMDS', fetchImpl, sleep: async (ms) => void waits.push(ms), policy: { attempts: c.attempts, backoffMs: 100 } });
      if (typeof c.want === 'string') {
        assert.equal(await http.text('/x'), c.want);
        assert.equal(calls.length, c.statuses.length + 1);
        assert.deepEqual(waits, [100, 200].slice(0, c.statuses.length), 'exponential backoff');
      } else {
        const want = c.want;
        await assert.rejects(http.text('/x'), (e: unknown) => e instanceof MetadataError && e.code === want.code);
        assert.equal(calls.length, want.calls);
      }
      assert.ok(calls.every((u) => u === 'http://md/x'), 'trailing slash of the base URL dropped');
    });
  }

  it('a server that never answers: each attempt times out, then METADATA_ENDPOINT_ABSENT', async () => {
    const hanging = createServer(() => undefined);
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
    try {
      const http = new MetadataHttp({ baseUrl: url, cloud: 'GCP', service: 'metadata server', policy: { attempts: 2, timeoutMs: 150, backoffMs: 1 } });
      const started = Date.now();
      await assert.rejects(http.text('/computeMetadata/v1/instance/name'), (e: unknown) => {
        assert.ok(e instanceof MetadataError);
        assert.equal(e.code, 'METADATA_ENDPOINT_ABSENT');
        assert.equal(e.message, `not on GCP: metadata server not reachable at ${url} (timed out after 150 ms)`);
        return true;
      });
      assert.ok(Date.now() - started < 3_000);
    } finally {
      hanging.closeAllConnections();
      hanging.close();
    }
  });

  it("the caller's abort stops at once without retrying", async () => {
    const { calls, fetchImpl } = scripted([503, 503, 503]);
    const ac = new AbortController();
    const http = new MetadataHttp({ baseUrl: 'http://md', cloud: 'Azure', service: 'IMDS', fetchImpl, sleep: async () => ac.abort(), policy: { attempts: 3 } });
    await assert.rejects(http.text('/metadata/instance', { signal: ac.signal }), (e: unknown) => e instanceof MetadataError && e.code === 'METADATA_UNAVAILABLE' && /cancelled/.test(e.message));
    assert.equal(calls.length, 1);
  });

  it('a cloud API (not the metadata service) that is unreachable is METADATA_UNAVAILABLE, not "not on <cloud>"', async () => {
    const fetchImpl = (async () => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }) });
    }) as unknown as typeof fetch;
    const http = new MetadataHttp({ baseUrl: 'http://arm', cloud: 'Azure', service: 'ARM', cloudApi: true, fetchImpl, sleep: async () => undefined });
    await assert.rejects(http.text('/x'), (e: unknown) => e instanceof MetadataError && e.code === 'METADATA_UNAVAILABLE' && e.message === 'Azure ARM not reachable at http://arm (connect ECONNREFUSED 127.0.0.1:9)');
  });
});
