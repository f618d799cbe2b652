/**
 * Integration (issue 37, docs/adr/0029): the verification service's per-address rate limit with a
 * real vTPM issuer (swtpm), gRPC and HTTP. One client hammering is refused (RESOURCE_EXHAUSTED,
 * HTTP 429 with Retry-After) while another address still gets documents that validate for its
 * nonce; the control (limit off) shows the hole: the hammer gets every quote it asks for.
 * Bounded: 2 s per hammer, 4 calls in flight. Figures go to the test log.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { QemuVtpmIssuer, QemuVtpmValidator } from '@asterism/attestation';
import { encodeBase64UrlPadded } from '@asterism/crypto';
import { createNopLogger } from '@asterism/logger';
import { verify } from '@asterism/proto';
import { PeerRateLimiter } from '@asterism/service-runtime';
import { missingComponent } from '@asterism/testing';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import { VerifyRateLimit } from './rate-limit.js';
import { VerificationService, VERIFY_USER_DATA } from './verification-service.js';

const skip = swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT);
const HAMMER_MS = 2000;
const RATE = 2;
const BURST = 4;
const logger = createNopLogger();

/** GET /?nonce= from `localAddress`: status, Retry-After and body. */
function httpGet(port: number, nonce: Buffer, localAddress: string): Promise<{ status: number; retryAfter?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: `/?nonce=${encodeBase64UrlPadded(nonce)}`, localAddress, agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body }));
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
    req.end();
  });
}

function grpcGet(client: verify.APIClient, nonce: Buffer): Promise<{ code: grpc.status; details?: string; doc?: Buffer }> {
  return new Promise((resolve) =>
    client.getAttestation({ nonce }, new grpc.Metadata(), { deadline: Date.now() + 10_000 }, (err, res) => resolve(err ? { code: err.code, details: err.details } : { code: grpc.status.OK, doc: Buffer.from(res!.attestation) })),
  );
}

/** `fn` in 4 loops for HAMMER_MS; counts outcomes by key. */
async function hammer(fn: () => Promise<string>): Promise<{ counts: Record<string, number>; perSecond: Record<string, number> }> {
  const counts: Record<string, number> = {};
  const until = Date.now() + HAMMER_MS;
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (Date.now() < until) {
      const k = await fn();
      counts[k] = (counts[k] ?? 0) + 1;
    }
  }));
  return { counts, perSecond: Object.fromEntries(Object.entries(counts).map(([k, n]) => [k, Math.round((n / HAMMER_MS) * 1000)])) };
}

async function validates(doc: Buffer, nonce: Buffer): Promise<boolean> {
  return Buffer.from(await new QemuVtpmValidator(new Map()).validate(doc, nonce)).equals(VERIFY_USER_DATA);
}

describe('verification service: per-address rate limit (real vTPM issuer)', { skip }, () => {
  let tpm: Swtpm;
  before(async () => (tpm = await startSwtpm()));
  after(async () => tpm?.stop());

  async function serve(rateLimit: VerifyRateLimit) {
    const service = new VerificationService(new QemuVtpmIssuer(() => tpm.client()), logger, { rateLimit });
    const ports = await service.listen('127.0.0.1', { grpc: 0, http: 0 });
    return { service, ports };
  }

  it('control, limit off: one client gets every quote it asks for', async () => {
    const { service, ports } = await serve(new VerifyRateLimit(logger, new PeerRateLimiter(0, 1)));
    const client = new verify.APIClient(`127.0.0.1:${ports.grpc}`, grpc.credentials.createInsecure());
    try {
      // More quotes than the limited test below can ever get (its cap), with no refusal. On a
      // loaded machine a quote takes longer, so the hammer goes on (at most 5 rounds) until it has them.
      const cap = BURST + RATE * (HAMMER_MS / 1000) + 2;
      const counts: Record<string, number> = {};
      for (let round = 0; round < 5 && (counts.OK ?? 0) <= cap; round++) {
        const r = await hammer(async () => grpc.status[(await grpcGet(client, randomBytes(32))).code]);
        for (const [k, n] of Object.entries(r.counts)) counts[k] = (counts[k] ?? 0) + n;
      }
      console.log(`[verify-rate] control, limit off: ${JSON.stringify(counts)} load ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')}`);
      assert.equal(counts.RESOURCE_EXHAUSTED, undefined);
      assert.ok((counts.OK ?? 0) > cap, `the hammer got ${counts.OK} quotes`);
    } finally {
      client.close();
      await service.close();
    }
  });

  it('gRPC and HTTP: a hammering address is refused, another address still gets documents', async () => {
    // Tighter than the default (5/s, burst 10) so the hammer exceeds it even when a quote takes
    // 250 ms on a loaded machine; the mechanism is the same.
    const { service, ports } = await serve(new VerifyRateLimit(logger, new PeerRateLimiter(RATE, BURST)));
    const client = new verify.APIClient(`127.0.0.1:${ports.grpc}`, grpc.credentials.createInsecure());
    try {
      const other: boolean[] = [];
      const legit = (async () => {
        for (let i = 0; i < 3; i++) {
          await new Promise((r) => setTimeout(r, 400));
          const nonce = randomBytes(32);
          const res = await httpGet(ports.http, nonce, '127.0.0.2');
          other.push(res.status === 200 && (await validates(Buffer.from((JSON.parse(res.body) as { data: string }).data, 'base64'), nonce)));
        }
      })();
      const g = await hammer(async () => {
        const r = await grpcGet(client, randomBytes(32));
        if (r.code === grpc.status.RESOURCE_EXHAUSTED) assert.match(r.details!, /too many attestation requests from this address; retry in \d+ s/);
        return grpc.status[r.code];
      });
      await legit;
      const h = await hammer(async () => {
        const r = await httpGet(ports.http, randomBytes(32), '127.0.0.3');
        if (r.status === 429) assert.match(r.retryAfter ?? '', /^\d+$/);
        return String(r.status);
      });
      const nonce = randomBytes(32);
      const other4 = await httpGet(ports.http, nonce, '127.0.0.4');
      console.log(`[verify-rate] limited: grpc hammer ${JSON.stringify(g)}, http hammer ${JSON.stringify(h)}, other address ok ${JSON.stringify(other)}, refusals ${JSON.stringify(service.refusals)}`);
      assert.ok((g.counts.RESOURCE_EXHAUSTED ?? 0) > 0 && (g.counts.OK ?? 0) <= BURST + RATE * (HAMMER_MS / 1000) + 2, JSON.stringify(g));
      assert.ok((h.counts['429'] ?? 0) > 0 && (h.counts['200'] ?? 0) <= BURST + RATE * (HAMMER_MS / 1000) + 2, JSON.stringify(h));
      assert.deepEqual(other, [true, true, true], 'another address gets valid documents during the hammer');
      assert.equal(other4.status, 200);
      assert.ok(await validates(Buffer.from((JSON.parse(other4.body) as { data: string }).data, 'base64'), nonce));
    } finally {
      client.close();
      await service.close();
    }
  });

  it('one bucket per host for both endpoints: documents taken over gRPC count against HTTP', async () => {
    // No refill to speak of: 2 documents per address for the whole test.
    const { service, ports } = await serve(new VerifyRateLimit(logger, new PeerRateLimiter(0.001, 2)));
    const client = new verify.APIClient(`127.0.0.1:${ports.grpc}`, grpc.credentials.createInsecure());
    try {
      assert.deepEqual([(await grpcGet(client, randomBytes(32))).code, (await grpcGet(client, randomBytes(32))).code], [grpc.status.OK, grpc.status.OK]);
      assert.equal((await grpcGet(client, randomBytes(32))).code, grpc.status.RESOURCE_EXHAUSTED);
      assert.equal((await httpGet(ports.http, randomBytes(32), '127.0.0.1')).status, 429, 'the same host over HTTP');
      assert.equal((await httpGet(ports.http, randomBytes(32), '127.0.0.5')).status, 200, 'another host');
    } finally {
      client.close();
      await service.close();
    }
  });
});
