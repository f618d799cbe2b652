import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { CollateralCache, type CollateralCacheOptions } from './cache.js';
import { CollateralError } from './errors.js';
import { httpCollateralFetcher } from './http-fetcher.js';
import { MemoryCollateralStore } from './memory-store.js';
import type { CollateralMetrics, CollateralVerifier } from './ports.js';
import { TokenBucket } from './rate-limiter.js';

/** A local HTTP server standing in for a vendor service; each test sets its behaviour per key. */
class FakeService {
  server: Server = createServer((req, res) => this.handle(req, res));
  hits: Array<{ key: string; at: number }> = [];
  behaviour = new Map<string, (res: ServerResponse) => void>();
  hanging: ServerResponse[] = [];
  url = '';

  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const key = decodeURIComponent((req.url ?? '/').slice(1));
    this.hits.push({ key, at: Date.now() });
    const b = this.behaviour.get(key) ?? ((r: ServerResponse) => r.writeHead(200).end(`good:${key}`));
    b(res);
  }

  hitsFor(key: string): number {
    return this.hits.filter((h) => h.key === key).length;
  }

  async stop(): Promise<void> {
    for (const r of this.hanging) r.destroy();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

const hang = (svc: FakeService) => (res: ServerResponse) => void svc.hanging.push(res);
const status = (code: number, headers: Record<string, string> = {}) => (res: ServerResponse) => void res.writeHead(code, headers).end();

/** Accepts payloads starting with `good:`; the value is the rest. */
const verifyGood: CollateralVerifier<string> = (_key, payload) => {
  const text = Buffer.from(payload).toString();
  if (!text.startsWith('good:')) throw new Error(`payload ${JSON.stringify(text)} does not verify`);
  return { value: text.slice(5) };
};

class CountingMetrics implements CollateralMetrics {
  counts: Record<string, number> = {};
  lookup(cache: string, outcome: string) {
    this.counts[`${cache}:lookup:${outcome}`] = (this.counts[`${cache}:lookup:${outcome}`] ?? 0) + 1;
  }
  fetch(cache: string, outcome: string) {
    this.counts[`${cache}:fetch:${outcome}`] = (this.counts[`${cache}:fetch:${outcome}`] ?? 0) + 1;
  }
}

const isCode = (code: string, reason?: RegExp) => (e: unknown) => e instanceof CollateralError && e.code === code && (!reason || reason.test(e.message));

describe('CollateralCache', () => {
  const svc = new FakeService();
  before(() => svc.start());
  after(() => svc.stop());

  const make = (extra: Partial<CollateralCacheOptions> = {}) =>
    new CollateralCache({
      name: 'test',
      fetch: httpCollateralFetcher((key) => `${svc.url}/${encodeURIComponent(key)}`),
      rateLimiter: new TokenBucket(1000, 1000),
      retry: { initialDelayMs: 50, maxDelayMs: 400, maxAttempts: 3 },
      ...extra,
    });

  it('fetches a miss once, verifies, persists it and answers later lookups from memory', async () => {
    const store = new MemoryCollateralStore();
    const metrics = new CountingMetrics();
    const cache = make({ store, metrics });
    const view = cache.view(verifyGood);
    assert.equal(await view.get('a1'), 'a1');
    assert.equal(await view.get('a1'), 'a1');
    await cache.flush();
    assert.equal(svc.hitsFor('a1'), 1);
    assert.deepEqual([...(store.records.get('test')?.keys() ?? [])], ['a1']);
    assert.deepEqual(metrics.counts, { 'test:lookup:miss': 1, 'test:fetch:ok': 1, 'test:lookup:hit': 1 });
    cache.close();
  });

  it('shares one fetch between concurrent lookups of a key', async () => {
    svc.behaviour.set('slow', (res) => setTimeout(() => res.writeHead(200).end('good:slow'), 100));
    const view = make().view(verifyGood);
    const all = await Promise.all(Array.from({ length: 20 }, () => view.get('slow')));
    assert.deepEqual(new Set(all), new Set(['slow']));
    assert.equal(svc.hitsFor('slow'), 1);
  });

  it('serves persisted records after a restart without the remote service, verifying them first', async () => {
    const store = new MemoryCollateralStore();
    await store.put('test', { key: 'p1', payload: Buffer.from('good:from-store'), fetchedAt: 0 });
    await store.put('test', { key: 'p2', payload: Buffer.from('tampered'), fetchedAt: 0 });
    const cache = make({ store, offline: true });
    assert.equal(await cache.load(), 2);
    const view = cache.view(verifyGood);
    assert.equal(await view.get('p1'), 'from-store');
    await assert.rejects(view.get('p2'), isCode('COLLATERAL_UNAVAILABLE', /offline/));
    assert.equal(svc.hitsFor('p1') + svc.hitsFor('p2'), 0);
  });

  it('re-verifies every record when a new verifier (new trust anchor) looks at it', async () => {
    const cache = make();
    cache.configure('c1', Buffer.from('good:anchor-A'));
    assert.equal(await cache.view(verifyGood).get('c1'), 'anchor-A');
    const strict: CollateralVerifier<string> = (_k, p) => {
      if (!Buffer.from(p).toString().endsWith('B')) throw new Error('not signed by anchor B');
      return { value: 'B' };
    };
    await assert.rejects(cache.view(strict).get('c1'), isCode('COLLATERAL_INVALID', /configured test collateral for c1 does not verify: not signed by anchor B/));
  });

  it('refuses a remote answer that does not verify, and neither keeps nor persists it', async () => {
    svc.behaviour.set('bad', (res) => res.writeHead(200).end('forged'));
    const store = new MemoryCollateralStore();
    const metrics = new CountingMetrics();
    const cache = make({ store, metrics });
    await assert.rejects(cache.view(verifyGood).get('bad'), isCode('COLLATERAL_INVALID', /does not verify/));
    await cache.flush();
    assert.equal(cache.entry('bad'), undefined);
    assert.equal(store.records.size, 0);
    assert.equal(metrics.counts['test:fetch:invalid'], 1);
    cache.close();
  });

  it('bounds a hanging remote service by the caller deadline, and keeps the late answer', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    svc.behaviour.set('late', (res) => void released.then(() => res.writeHead(200).end('good:late')));
    const cache = make();
    const view = cache.view(verifyGood);
    const started = Date.now();
    await assert.rejects(view.get('late', AbortSignal.timeout(150)), isCode('COLLATERAL_UNAVAILABLE', /did not answer in time/));
    assert.ok(Date.now() - started < 1000, `gave up after ${Date.now() - started} ms`);
    release();
    for (let i = 0; i < 50 && !cache.entry('late'); i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await view.get('late', AbortSignal.timeout(50)), 'late', 'the fetch finished after the caller left and filled the cache');
    assert.equal(svc.hitsFor('late'), 1);
    cache.close();
  });

  it('bounds every lookup by maxWaitMs and aborts the fetch at fetchTimeoutMs', async () => {
    svc.behaviour.set('forever', hang(svc));
    const cache = make({ maxWaitMs: 100, fetchTimeoutMs: 200, retry: { initialDelayMs: 60_000, maxAttempts: 1 } });
    const started = Date.now();
    await assert.rejects(cache.view(verifyGood).get('forever'), isCode('COLLATERAL_UNAVAILABLE'));
    assert.ok(Date.now() - started < 1000);
    for (let i = 0; i < 50 && cache.failingKeys === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(cache.failingKeys, 1, 'the timed-out fetch counts as a failure');
    cache.close();
  });

  it('backs off after 429 (fail fast, no new request) and fills the cache by a background retry', async () => {
    let n = 0;
    svc.behaviour.set('throttled', (res) => (++n === 1 ? status(429, { 'Retry-After': '0' })(res) : res.writeHead(200).end('good:recovered')));
    const metrics = new CountingMetrics();
    const cache = make({ metrics });
    const view = cache.view(verifyGood);
    await assert.rejects(view.get('throttled'), isCode('COLLATERAL_UNAVAILABLE', /HTTP 429/));
    await assert.rejects(view.get('throttled'), isCode('COLLATERAL_UNAVAILABLE', /failed recently/));
    assert.equal(svc.hitsFor('throttled'), 1, 'no request while backing off');
    for (let i = 0; i < 100 && !cache.entry('throttled'); i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await view.get('throttled'), 'recovered');
    assert.equal(svc.hitsFor('throttled'), 2);
    assert.equal(metrics.counts['test:fetch:failed'], 1);
    assert.equal(cache.failingKeys, 0);
    cache.close();
  });

  it('does not retry permanent answers (404) in the background', async () => {
    svc.behaviour.set('unknown-chip', status(404));
    const cache = make();
    await assert.rejects(cache.view(verifyGood).get('unknown-chip'), isCode('COLLATERAL_UNAVAILABLE', /HTTP 404/));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(svc.hitsFor('unknown-chip'), 1);
    cache.close();
  });

  it('stops background retries after maxAttempts and on close()', async () => {
    svc.behaviour.set('down', status(503));
    const cache = make({ retry: { initialDelayMs: 20, maxDelayMs: 40, maxAttempts: 2 } });
    await assert.rejects(cache.view(verifyGood).get('down'));
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(svc.hitsFor('down'), 3, 'one demand fetch + two background retries');
    svc.behaviour.set('down2', status(503));
    const closing = make({ retry: { initialDelayMs: 50, maxAttempts: 5 } });
    await assert.rejects(closing.view(verifyGood).get('down2'));
    closing.close();
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(svc.hitsFor('down2'), 1);
  });

  it('never contacts the remote service when offline; configured and provided records still work', async () => {
    const store = new MemoryCollateralStore();
    const cache = make({ offline: true, store });
    cache.configure('cfg', Buffer.from('good:configured'));
    const view = cache.view(verifyGood);
    assert.equal(await view.get('cfg'), 'configured');
    await assert.rejects(view.get('nope'), (e: unknown) => isCode('COLLATERAL_UNAVAILABLE')(e) && (e as CollateralError).details.offline === true);
    assert.equal(await view.provide('evidence', Buffer.from('good:from-evidence')), 'from-evidence');
    await assert.rejects(view.provide('forged', Buffer.from('bad')), /does not verify/);
    assert.equal(await view.get('evidence'), 'from-evidence');
    await cache.flush();
    assert.deepEqual([...(store.records.get('test')?.keys() ?? [])], ['evidence']);
    assert.equal(svc.hitsFor('nope'), 0);
  });

  it('refetches expired collateral and refreshes stale collateral in the background', async () => {
    let clock = 1_000;
    let serial = 0;
    svc.behaviour.set('ttl', (res) => res.writeHead(200).end(`good:v${++serial}`));
    const cache = make({ now: () => clock });
    const view = cache.view<string>(async (k, p, now) => ({ value: (await verifyGood(k, p, now)).value, refreshAt: now + 100, notAfter: now + 1_000 }));
    assert.equal(await view.get('ttl'), 'v1');
    clock += 500;
    assert.equal(await view.get('ttl'), 'v1', 'stale but usable: served at once');
    for (let i = 0; i < 50 && serial < 2; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(serial, 2, 'refreshed in the background');
    clock += 5_000;
    // Never the expired v1: either a fresh fetch (v3) or the background refresh that was still
    // being stored when the clock jumped (v2, verified at the new time).
    assert.match(await view.get('ttl'), /^v[23]$/, 'expired: fetched before use');
    cache.close();
  });

  it('spreads fetches of many keys over time through the shared token bucket', async () => {
    const bucket = new TokenBucket(10, 1);
    const a = make({ rateLimiter: bucket, name: 'a' });
    const b = make({ rateLimiter: bucket, name: 'b' });
    const started = Date.now();
    await Promise.all([a.view(verifyGood).get('rl1'), a.view(verifyGood).get('rl2'), b.view(verifyGood).get('rl3'), b.view(verifyGood).get('rl4')]);
    const times = ['rl1', 'rl2', 'rl3', 'rl4'].map((k) => svc.hits.find((h) => h.key === k)!.at).sort((x, y) => x - y);
    assert.ok(times[3]! - started >= 250, `4 requests at 10/s with burst 1 take >= 300 ms, took ${times[3]! - started}`);
  });
});

describe('TokenBucket', () => {
  it('serves the burst at once, then waits; an aborted waiter leaves the queue', async () => {
    const bucket = new TokenBucket(20, 2);
    // Timed from before the burst is spent: the next token is 50 ms after that, however slow the
    // steps in between run on a loaded machine.
    const started = Date.now();
    assert.equal(bucket.tryTake(), true);
    assert.equal(bucket.tryTake(), true);
    assert.equal(bucket.tryTake(), false);
    const aborted = new AbortController();
    const gone = bucket.take(aborted.signal);
    aborted.abort(new Error('caller left'));
    await assert.rejects(gone, /caller left/);
    await bucket.take();
    assert.ok(Date.now() - started >= 45, `waited ${Date.now() - started} ms for a token at 20/s`);
  });

  for (const [name, rate, burst] of [
    ['zero rate', 0, 1],
    ['burst below one', 1, 0],
  ] as const) {
    it(`rejects ${name}`, () => assert.throws(() => new TokenBucket(rate, burst), RangeError));
  }
});
