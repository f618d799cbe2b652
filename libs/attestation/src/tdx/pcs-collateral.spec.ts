import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { CollateralCache, type CollateralCacheOptions } from '../collateral/cache.js';
import { CollateralError } from '../collateral/errors.js';
import { MemoryCollateralStore } from '../collateral/memory-store.js';
import { TokenBucket } from '../collateral/rate-limiter.js';
import { CachedTdxCollateralSource, pcsCollateralFetcher, pcsRequest } from './pcs-collateral.js';
import { DcapVerifier } from './verifier.js';
import { tdxVector, VECTOR_TIME, vectorCollateral } from './vectors.fixture.js';

/** A local server replaying Intel PCS answers (bodies + URL-encoded issuer chain headers). */
function pcsServer(mode: { tamperTcb?: boolean; hang?: boolean }, hits: string[]): Server {
  const v = vectorCollateral();
  return createServer((req, res) => {
    hits.push(req.url ?? '');
    if (mode.hang) return; // never answers
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (body: Buffer | string, chainHeader?: string, chain?: string) => {
      if (chainHeader && chain) res.setHeader(chainHeader, encodeURIComponent(chain));
      res.end(body);
    };
    if (url.pathname === '/tdx/certification/v4/tcb' && url.searchParams.get('fmspc') === '50806f000000') {
      return send(mode.tamperTcb ? v.tcbInfo.replace('"tcbEvaluationDataNumber":15', '"tcbEvaluationDataNumber":16') : v.tcbInfo, 'TCB-Info-Issuer-Chain', v.tcbInfoIssuerChain);
    }
    if (url.pathname === '/tdx/certification/v4/qe/identity') return send(v.qeIdentity, 'SGX-Enclave-Identity-Issuer-Chain', v.qeIdentityIssuerChain);
    if (url.pathname === '/sgx/certification/v4/pckcrl' && url.searchParams.get('ca') === 'platform') return send(Buffer.from(v.pckCrl), 'SGX-PCK-CRL-Issuer-Chain', v.pckCrlIssuerChain);
    if (url.pathname === '/root.der') return send(Buffer.from(v.rootCrl));
    res.statusCode = 404;
    res.end();
  });
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function sourceFor(base: string, extra: Partial<CollateralCacheOptions> = {}) {
  const cache = new CollateralCache({
    name: 'tdx-pcs',
    fetch: pcsCollateralFetcher({ baseUrl: base, rootCrlUrl: `${base}/root.der` }),
    rateLimiter: new TokenBucket(100, 100),
    now: () => VECTOR_TIME.getTime(),
    maxWaitMs: 2000,
    fetchTimeoutMs: 2000,
    retry: { maxAttempts: 0 },
    ...extra,
  });
  return { cache, source: new CachedTdxCollateralSource(cache) };
}

describe('CachedTdxCollateralSource against a local PCS replay server', () => {
  const hits: string[] = [];
  const server = pcsServer({}, hits);
  let base = '';
  before(async () => (base = await listen(server)));
  after(() => server.close());

  it('fetches, verifies and serves the collateral the real quote authenticates with; a second lookup is served from memory', async () => {
    const { cache, source } = sourceFor(base);
    const c = await source.collateral({ fmspc: '50806F000000', ca: 'platform' });
    assert.deepEqual({ ...c, pckCrl: Buffer.from(c.pckCrl), rootCrl: Buffer.from(c.rootCrl) }, vectorCollateral());
    new DcapVerifier().authenticate(tdxVector('quote-v4-spr.dat'), c, VECTOR_TIME);
    const before = hits.length;
    await source.collateral({ fmspc: '50806f000000', ca: 'platform' });
    assert.equal(hits.length, before, 'warm lookups do not contact PCS');
    cache.close();
  });

  it('persists verified records; an offline cache restored from the store serves them without PCS', async () => {
    const store = new MemoryCollateralStore();
    const online = sourceFor(base, { store });
    await online.source.collateral({ fmspc: '50806f000000', ca: 'platform' });
    await online.cache.flush();
    online.cache.close();
    const offline = sourceFor('http://127.0.0.1:9', { store, offline: true });
    await offline.cache.load();
    const c = await offline.source.collateral({ fmspc: '50806f000000', ca: 'platform' });
    new DcapVerifier().authenticate(tdxVector('quote-v4-spr.dat'), c, VECTOR_TIME);
    await assert.rejects(offline.source.collateral({ fmspc: '00906ed50000', ca: 'platform' }), (err: CollateralError) => err.code === 'COLLATERAL_UNAVAILABLE' && err.details.offline === true);
    offline.cache.close();
  });

  it('unknown platforms and keys fail with typed errors', async () => {
    const { cache, source } = sourceFor(base);
    await assert.rejects(source.collateral({ fmspc: '00906ed50000', ca: 'platform' }), (err: CollateralError) => err.code === 'COLLATERAL_UNAVAILABLE');
    assert.throws(() => pcsRequest('tcb/not-hex'), /unknown TDX collateral key/);
    cache.close();
  });
});

describe('CachedTdxCollateralSource with a misbehaving PCS', () => {
  it('a tampered TCB info from PCS is COLLATERAL_INVALID and is not cached', async () => {
    const hits: string[] = [];
    const server = pcsServer({ tamperTcb: true }, hits);
    const base = await listen(server);
    const { cache, source } = sourceFor(base);
    try {
      await assert.rejects(source.collateral({ fmspc: '50806f000000', ca: 'platform' }), (err: CollateralError) => err instanceof CollateralError && err.code === 'COLLATERAL_INVALID');
      assert.equal(cache.entry('tcb/50806f000000'), undefined);
    } finally {
      cache.close();
      server.close();
    }
  });

  it('a hanging PCS is bounded by the caller’s attestation deadline', async () => {
    const hits: string[] = [];
    const server = pcsServer({ hang: true }, hits);
    const base = await listen(server);
    const { cache, source } = sourceFor(base);
    const t0 = Date.now();
    try {
      await assert.rejects(source.collateral({ fmspc: '50806f000000', ca: 'platform' }, AbortSignal.timeout(300)), (err: CollateralError) => err.code === 'COLLATERAL_UNAVAILABLE');
      assert.ok(Date.now() - t0 < 1500, `gave up after ${Date.now() - t0} ms`);
    } finally {
      cache.close();
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('CachedTdxCollateralSource refreshes before "next update" (pinned clock, local PCS replay)', () => {
  const day = (iso: string) => new Date(`${iso}T00:00:00Z`).getTime();
  const platform = { fmspc: '50806f000000', ca: 'platform' } as const;
  // Refresh points of the June 2023 records: QE identity and PCK CRL (2023-06-08 -> 07-08) at their
  // midpoint 06-23, TCB info (06-18 -> 07-18) at 07-03, root CRL (2023-04-03 -> 2024-04-02) in October.
  const due = (hits: string[]) => hits.map((u) => u.split('?')[0]).sort();

  it('past the refresh point every lookup is served the cached record at once; one background request per due record goes out', async () => {
    const hits: string[] = [];
    const mode = { hang: false };
    const server = pcsServer(mode, hits);
    let clock = VECTOR_TIME.getTime();
    const { cache, source } = sourceFor(await listen(server), { now: () => clock });
    try {
      await source.collateral(platform);
      assert.equal(hits.length, 4);
      mode.hang = true; // PCS stops answering: the refresh must not hold up any lookup
      clock = day('2023-06-24');
      const served = await Promise.all(Array.from({ length: 10 }, () => source.collateral(platform, AbortSignal.timeout(1000))));
      for (const c of served) assert.deepEqual({ ...c, pckCrl: Buffer.from(c.pckCrl), rootCrl: Buffer.from(c.rootCrl) }, vectorCollateral());
      await source.collateral(platform);
      for (let i = 0; i < 100 && hits.length < 6; i++) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(due(hits.slice(4)), ['/sgx/certification/v4/pckcrl', '/tdx/certification/v4/qe/identity'], 'one request per due record, however many lookups');
    } finally {
      cache.close();
      server.closeAllConnections();
      server.close();
    }
  });

  it('a refresh that brings the same record is not repeated within the refresh interval; later it is, and the TCB info joins at its own point', async () => {
    const hits: string[] = [];
    const server = pcsServer({}, hits);
    let clock = VECTOR_TIME.getTime();
    const { cache, source } = sourceFor(await listen(server), { now: () => clock, refreshIntervalMs: 3_600_000 });
    try {
      await source.collateral(platform);
      clock = day('2023-06-24');
      await source.collateral(platform);
      await cache.settled();
      assert.equal(hits.length, 6);
      for (let i = 0; i < 5; i++) await source.collateral(platform);
      await cache.settled();
      assert.equal(hits.length, 6, 'PCS still serves the same records: not asked again within the hour');
      clock = day('2023-07-04');
      await source.collateral(platform);
      await cache.settled();
      assert.deepEqual(due(hits.slice(6)), ['/sgx/certification/v4/pckcrl', '/tdx/certification/v4/qe/identity', '/tdx/certification/v4/tcb']);
    } finally {
      cache.close();
      server.close();
    }
  });

  it('never serves a record past its next update: PCS down -> COLLATERAL_UNAVAILABLE naming the expiry; PCS serving the stale record -> refused too; offline likewise', async () => {
    const hits: string[] = [];
    const mode = { hang: false };
    const server = pcsServer(mode, hits);
    const base = await listen(server);
    const store = new MemoryCollateralStore();
    let clock = VECTOR_TIME.getTime();
    const expired = (re: RegExp) => (err: CollateralError) => err instanceof CollateralError && err.code === 'COLLATERAL_UNAVAILABLE' && re.test(err.message) && typeof err.details.expiredAt === 'string';
    // Each step is a joinservice (re)started on the same persisted records.
    const restarted = async (extra: Partial<CollateralCacheOptions> = {}) => {
      const s = sourceFor(extra.offline ? 'http://127.0.0.1:9' : base, { now: () => clock, store, ...extra });
      await s.cache.load();
      return s;
    };
    try {
      const first = await restarted();
      await first.source.collateral(platform);
      await first.cache.flush();
      first.cache.close();
      clock = day('2023-07-09'); // QE identity and PCK CRL ended 2023-07-08
      mode.hang = true;
      const down = await restarted();
      await assert.rejects(down.source.collateral(platform, AbortSignal.timeout(300)), expired(/cached only past its expiry \(2023-07-08T07:2\d:\d\d.000Z\) and the remote service did not answer in time/));
      down.cache.close();
      mode.hang = false;
      const stale = await restarted();
      await assert.rejects(stale.source.collateral(platform, AbortSignal.timeout(1000)), expired(/expired at 2023-07-08/));
      stale.cache.close();
      const offline = await restarted({ offline: true });
      await assert.rejects(offline.source.collateral(platform), expired(/cached only past its expiry .* and the cache is offline/));
      offline.cache.close();
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
