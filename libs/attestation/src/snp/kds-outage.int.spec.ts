import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { CollateralError } from '../collateral/errors.js';
import { MemoryCollateralStore } from '../collateral/memory-store.js';
import type { CollateralMetrics } from '../collateral/ports.js';
import type { SevSnpConfig } from '../config/types.js';
import { AttestationError } from '../errors.js';
import { NOP_ATTESTATION_LOGGER } from '../interfaces.js';
import { Measurements } from '../measurements/measurements.js';
import { SnpCollateral, SNP_COLLATERAL_CACHES } from './collateral.js';
import { buildReport, signReport, TestAmdRoot, type TestCert } from './golden-vectors.fixture.js';
import { snpVerifierFor } from './validator.js';

/** The attestation timeout of these tests (the handshake deadline a validator gets). */
const ATTESTATION_TIMEOUT_MS = 1500;
/**
 * How fast a validation with cached collateral is during an outage is a benchmark's question
 * (tools/bench/src/snp-bench.ts, its KDS-outage case), not a bound asserted here: these tests check that it
 * succeeds without asking KDS, and report the durations.
 */
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const TCB = { bootloader: 4, tee: 0, snp: 21, microcode: 211 };
const chip = (b: number) => Buffer.alloc(64, b);

type KdsMode = 'ok' | 'hang' | '429';

/** A local stand-in for AMD KDS (loopback) serving one synthetic hierarchy; it can hang or throttle. */
class FakeKds {
  mode: KdsMode = 'ok';
  readonly requests: string[] = [];
  readonly #hanging: ServerResponse[] = [];
  private server!: Server;
  url = '';

  constructor(
    private readonly root: TestAmdRoot,
    private readonly vceks: Map<string, TestCert>,
  ) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      this.requests.push(req.url ?? '');
      if (this.mode === 'hang') return void this.#hanging.push(res);
      if (this.mode === '429') return void res.writeHead(429, { 'retry-after': '1' }).end('slow down');
      const m = /^\/vcek\/v1\/Milan\/([0-9a-f]{128})\?blSPL=4&teeSPL=0&snpSPL=21&ucodeSPL=211$/.exec(req.url ?? '');
      if (req.url === '/vcek/v1/Milan/cert_chain') return void res.writeHead(200).end(this.root.chainPem('vcek'));
      const vcek = m ? this.vceks.get(m[1]!) : undefined;
      if (!vcek) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(vcek.der);
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const r of this.#hanging) r.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

/** Counts what the caches report (the joinservice exports these as Prometheus counters). */
class CountingMetrics implements CollateralMetrics {
  readonly counts = new Map<string, number>();
  lookup(cache: string, outcome: string): void {
    this.bump(`${cache} lookup ${outcome}`);
  }
  fetch(cache: string, outcome: string): void {
    this.bump(`${cache} fetch ${outcome}`);
  }
  get(k: string): number {
    return this.counts.get(k) ?? 0;
  }
  private bump(k: string): void {
    this.counts.set(k, this.get(k) + 1);
  }
}

const V = SNP_COLLATERAL_CACHES.vcek;

describe('SNP collateral during an AMD KDS outage (local fake KDS that hangs or answers 429)', () => {
  let root: TestAmdRoot;
  let kds: FakeKds;
  const vceks = new Map<string, TestCert>();
  const store = new MemoryCollateralStore();
  const metrics = new CountingMetrics();
  let collateral: SnpCollateral;

  before(async () => {
    root = await TestAmdRoot.create();
    for (const b of [0xa1, 0xb2, 0xc3]) vceks.set(chip(b).toString('hex'), await root.issue('vcek', { tcb: TCB, chipId: chip(b) }));
    kds = new FakeKds(root, vceks);
    await kds.start();
    collateral = new SnpCollateral({ kdsBaseUrl: kds.url, store, metrics, retry: { initialDelayMs: 60_000 } });
  });
  after(async () => {
    collateral?.close();
    await kds?.stop();
  });

  const config: () => SevSnpConfig = () => ({
    variant: 'gcp-sev-snp',
    measurements: new Measurements(),
    bootloaderVersion: { value: TCB.bootloader, wantLatest: false },
    teeVersion: { value: TCB.tee, wantLatest: false },
    snpVersion: { value: TCB.snp, wantLatest: false },
    microcodeVersion: { value: TCB.microcode, wantLatest: false },
    amdRootKey: root.ark.der,
    amdSigningKey: null,
  });

  /** Evidence without VCEK and chain (as GCP hosts without a certificate table send it): KDS or the cache must supply them. */
  const evidence = (b: number) => ({
    report: signReport(buildReport({ signingKey: 0, tcb: TCB, chipId: chip(b) }), vceks.get(chip(b).toString('hex'))!.privateKey),
    reportSigner: Buffer.alloc(0),
    certChain: Buffer.alloc(0),
  });

  /** Five validations with cached collateral: every one succeeds; returns their median duration (reported only). */
  async function cachedValidations(c: SnpCollateral, b: number): Promise<number> {
    const runs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await validate(c, b);
      assert.equal(r.error, undefined, r.error?.message);
      runs.push(r.ms);
    }
    return median(runs);
  }

  /** One validation under the attestation timeout; returns its duration or the error. */
  async function validate(c: SnpCollateral, b: number): Promise<{ ms: number; error?: AttestationError }> {
    const verifier = snpVerifierFor(config(), { collateral: c }, NOP_ATTESTATION_LOGGER, { minimumTcb: false });
    const start = performance.now();
    try {
      await verifier.verify(evidence(b), () => undefined, AbortSignal.timeout(ATTESTATION_TIMEOUT_MS));
      return { ms: performance.now() - start };
    } catch (err) {
      if (!(err instanceof AttestationError)) throw err;
      return { ms: performance.now() - start, error: err };
    }
  }

  it('KDS up: the first validation fetches VCEK and chain (misses), the second is answered from the cache (hit)', async () => {
    assert.equal((await validate(collateral, 0xa1)).error, undefined);
    assert.deepEqual(kds.requests.sort(), [`/vcek/v1/Milan/${chip(0xa1).toString('hex')}?blSPL=4&teeSPL=0&snpSPL=21&ucodeSPL=211`, '/vcek/v1/Milan/cert_chain'].sort());
    assert.equal(metrics.get(`${V} fetch ok`), 1);
    assert.equal(metrics.get(`${V} lookup miss`), 1);
    assert.equal((await validate(collateral, 0xa1)).error, undefined);
    assert.equal(metrics.get(`${V} lookup hit`), 1);
    assert.equal(kds.requests.length, 2, 'no KDS request for cached collateral');
    assert.ok((await store.list(V)).length === 1, 'the VCEK was persisted');
  });

  for (const mode of ['hang', '429'] as const) {
    it(`KDS ${mode === 'hang' ? 'hangs' : 'answers 429'}: cached chip succeeds without KDS; an uncached chip fails with COLLATERAL_UNAVAILABLE within the attestation timeout`, async () => {
      kds.mode = mode;
      const before = kds.requests.length;
      const cachedMs = await cachedValidations(collateral, 0xa1);
      assert.equal(kds.requests.length, before, 'cached collateral needs no KDS');
      console.log(`[kds-outage] KDS ${mode}: cached validations ${cachedMs.toFixed(1)} ms (median of 5)`);

      const uncachedChip = mode === 'hang' ? 0xb2 : 0xc3;
      const failuresBefore = metrics.get(`${V} fetch failed`);
      const uncached = await validate(collateral, uncachedChip);
      assert.equal(uncached.error?.code, 'COLLATERAL_UNAVAILABLE', uncached.error?.message);
      assert.match(uncached.error!.message, mode === 'hang' ? /did not answer in time/ : /HTTP 429/);
      // Bounded by the attestation timeout (plus scheduling slack), never the minutes a KDS fetch may take.
      assert.ok(uncached.ms < ATTESTATION_TIMEOUT_MS + 1000, `uncached validation took ${uncached.ms} ms`);
      if (mode === '429') assert.equal(metrics.get(`${V} fetch failed`), failuresBefore + 1);
      else assert.ok(uncached.ms >= ATTESTATION_TIMEOUT_MS - 50, 'waited for the deadline, not less');
    });
  }

  it('a restarted joinservice (new caches, same persisted store) validates a known chip while KDS is down', async () => {
    kds.mode = 'hang';
    const restarted = new SnpCollateral({ kdsBaseUrl: kds.url, store, retry: { initialDelayMs: 60_000 } });
    try {
      assert.ok((await restarted.load()) >= 2, 'VCEK and chain loaded from the store');
      const before = kds.requests.length;
      const knownMs = await cachedValidations(restarted, 0xa1);
      console.log(`[kds-outage] restarted, KDS hangs: validations from the persisted store ${knownMs.toFixed(1)} ms (median of 5)`);
      assert.equal(kds.requests.length, before);
    } finally {
      restarted.close();
    }
  });

  it('offline mode uses only cached collateral: known chip succeeds, unknown chip is COLLATERAL_UNAVAILABLE without any request', async () => {
    kds.mode = 'ok';
    const offline = new SnpCollateral({ kdsBaseUrl: kds.url, store, offline: true });
    try {
      await offline.load();
      const before = kds.requests.length;
      assert.equal((await validate(offline, 0xa1)).error, undefined);
      const unknown = await validate(offline, 0xc3);
      assert.equal(unknown.error?.code, 'COLLATERAL_UNAVAILABLE');
      assert.match(unknown.error!.message, /offline/);
      assert.equal(kds.requests.length, before);
    } finally {
      offline.close();
    }
  });
});

describe('SNP certificates are refreshed before they expire, never served after (pinned clock, local fake KDS)', () => {
  const DAY = 86_400_000;
  const T0 = Date.parse('2031-01-01T00:00:00Z');

  it('30 days before the VCEK expires: validations go on from the cache while one background KDS request goes out; past notAfter with KDS down: COLLATERAL_UNAVAILABLE', async () => {
    const root = await TestAmdRoot.create(new Date(T0 - 365 * DAY), new Date(T0 + 3650 * DAY));
    const b = 0xd4;
    const vcek = await root.issue('vcek', { tcb: TCB, chipId: chip(b), notBefore: new Date(T0 - 365 * DAY), notAfter: new Date(T0 + 60 * DAY) });
    const kds = new FakeKds(root, new Map([[chip(b).toString('hex'), vcek]]));
    await kds.start();
    let clock = T0;
    const collateral = new SnpCollateral({ kdsBaseUrl: kds.url, now: () => clock, retry: { initialDelayMs: 60_000 } });
    const config: SevSnpConfig = {
      variant: 'gcp-sev-snp',
      measurements: new Measurements(),
      bootloaderVersion: { value: TCB.bootloader, wantLatest: false },
      teeVersion: { value: TCB.tee, wantLatest: false },
      snpVersion: { value: TCB.snp, wantLatest: false },
      microcodeVersion: { value: TCB.microcode, wantLatest: false },
      amdRootKey: root.ark.der,
      amdSigningKey: null,
    };
    const evidence = { report: signReport(buildReport({ signingKey: 0, tcb: TCB, chipId: chip(b) }), vcek.privateKey), reportSigner: Buffer.alloc(0), certChain: Buffer.alloc(0) };
    const verifier = snpVerifierFor(config, { collateral, now: () => new Date(clock) }, NOP_ATTESTATION_LOGGER, { minimumTcb: false });
    const validate = () => verifier.verify(evidence, () => undefined, AbortSignal.timeout(ATTESTATION_TIMEOUT_MS));
    const vcekRequests = () => kds.requests.filter((u) => u.startsWith(`/vcek/v1/Milan/${chip(b).toString('hex')}`)).length;
    try {
      await validate();
      assert.equal(vcekRequests(), 1);
      await validate();
      assert.equal(vcekRequests(), 1, '60 days left: no refresh yet');

      clock = T0 + 40 * DAY; // 20 days left: inside the 30-day refresh window
      kds.mode = 'hang';
      for (let i = 0; i < 5; i++) await validate();
      for (let i = 0; i < 100 && vcekRequests() < 2; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(vcekRequests(), 2, 'one background request, however many validations');

      clock = T0 + 61 * DAY; // the VCEK has expired; KDS still hangs
      await assert.rejects(validate(), (e: unknown) => e instanceof AttestationError && e.code === 'COLLATERAL_UNAVAILABLE' && e.cause instanceof CollateralError && /cached only past its expiry \(2031-03-02T00:00:00.000Z\)/.test(e.message));
    } finally {
      collateral.close();
      await kds.stop();
    }
  });
});
