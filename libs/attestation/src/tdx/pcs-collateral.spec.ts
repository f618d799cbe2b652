import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { CollateralCache } from '../collateral/cache.js';
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

function sourceFor(base: string, extra: { offline?: boolean; store?: MemoryCollateralStore } = {}) {
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
