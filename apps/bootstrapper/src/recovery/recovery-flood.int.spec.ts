/**
 * Integration, bounded loopback flood (issue 37, docs/adr/0029): one unauthenticated address
 * (127.0.0.2) sends hundreds of wrong master secrets over one aTLS connection to the recovery
 * server of a node in a full outage (real LUKS2 image, real cryptsetup, the `light` argon2id
 * preset), while a second client from 127.0.0.1 stands in for the operator's `asterism recover`.
 *   1. control, the limits off (as before issue 37): every wrong secret starts its own
 *      cryptsetup, several at once;
 *   2. with the limits: the flood is refused with RESOURCE_EXHAUSTED after a few, at most one
 *      cryptsetup runs at a time, and the operator's recover succeeds during the flood.
 * Figures (time to the operator's success, peak concurrent cryptsetup processes, RSS) go to
 * .test-results/recovery-flood.json and the test log; no latency is asserted beyond the call's own deadline.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { DummyIssuer, DummyValidator } from '@asterism/attestation';
import { atlsChannelCredentials, atlsServerCredentials } from '@asterism/atls';
import { ClusterKms, encodeClusterKmsUri, NO_STORE_URI, stateDiskKeyId, STATE_DISK_KEY_LENGTH } from '@asterism/crypto';
import { createNopLogger } from '@asterism/logger';
import { recoverproto } from '@asterism/proto';
import { missingComponent } from '@asterism/testing';
import { PeerRateLimiter } from '@asterism/service-runtime';
import { CryptsetupStateDisk, formatStateDisk, STATE_DISK_PBKDF_PRESETS } from '../disk/state-disk.js';
import { KeyCheckQueue } from './key-check-queue.js';
import { RecoveryServer, type RecoveryServerOptions } from './recovery-server.js';

const skip = spawnSync('cryptsetup', ['--version']).status === 0 ? false : missingComponent('cryptsetup', 'apt-get install cryptsetup-bin');
const logger = createNopLogger();
const FLOOD = 400;
const CONTROL_FLOOD = 60;
const OPERATOR_DEADLINE_MS = 30_000;

/** cryptsetup processes of this test process right now, and their summed RSS in KiB. */
function cryptsetupChildren(): { count: number; rssKiB: number } {
  let count = 0;
  let rssKiB = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      if (!/^Name:\s+cryptsetup$/m.test(status) || Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]) !== process.pid) continue;
      count++;
      rssKiB += Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    } catch {
      // the process ended while we looked
    }
  }
  return { count, rssKiB };
}

/** Samples the peaks every 10 ms until stopped. */
function sampler() {
  const peak = { cryptsetup: 0, cryptsetupRssMiB: 0, rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20) };
  const timer = setInterval(() => {
    const c = cryptsetupChildren();
    peak.cryptsetup = Math.max(peak.cryptsetup, c.count);
    peak.cryptsetupRssMiB = Math.max(peak.cryptsetupRssMiB, Math.round(c.rssKiB / 1024));
    peak.rssMiB = Math.max(peak.rssMiB, Math.round(process.memoryUsage().rss / 2 ** 20));
  }, 10);
  return { stop: () => (clearInterval(timer), peak) };
}

function recoverOnce(client: recoverproto.APIClient, kmsUri: string, deadlineMs: number): Promise<grpc.ServiceError | null> {
  return new Promise((res) => client.recover({ kmsUri, storageUri: NO_STORE_URI }, new grpc.Metadata(), { deadline: Date.now() + deadlineMs }, (err) => res(err)));
}

const figures: Record<string, unknown> = { preset: 'light (argon2id, 8 MiB, 4 passes)', loadavgBefore: readFileSync('/proc/loadavg', 'utf8').trim() };

describe('recovery server under a wrong-master-secret flood (bounded, loopback)', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'recovery-flood-'));
  const master = { key: randomBytes(32), salt: randomBytes(32) };
  let disk: CryptsetupStateDisk;

  before(async () => {
    const image = join(dir, 'state.img');
    writeFileSync(image, '');
    truncateSync(image, 32 * 1024 * 1024);
    const initial = randomBytes(32);
    writeFileSync(join(dir, 'initial.key'), initial, { mode: 0o600 });
    await formatStateDisk(image, initial);
    disk = new CryptsetupStateDisk(image, join(dir, 'initial.key'), STATE_DISK_PBKDF_PRESETS.light);
    await disk.updatePassphrase(new ClusterKms(master).getDek(stateDiskKeyId(await disk.uuid()), STATE_DISK_KEY_LENGTH));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    const root = process.env.ASTERISM_WORKSPACE ?? resolve(import.meta.dirname, '..', '..', '..', '..');
    mkdirSync(join(root, '.test-results'), { recursive: true });
    writeFileSync(join(root, '.test-results', 'recovery-flood.json'), `${JSON.stringify(figures, null, 2)}\n`);
    console.log(`[recovery-flood] ${JSON.stringify(figures)}`);
  });

  /** Floods from 127.0.0.2 over one channel; the operator calls from 127.0.0.1 after `operatorAfterMs`. */
  async function flood(options: RecoveryServerOptions, count: number, operatorAfterMs: number) {
    const server = new RecoveryServer(disk, logger, options);
    const port = await server.listen('127.0.0.1:0', atlsServerCredentials({ issuer: new DummyIssuer() }));
    const attacker = new recoverproto.APIClient(`127.0.0.1:${port}`, atlsChannelCredentials({ validators: [new DummyValidator()], localAddress: '127.0.0.2' }));
    const operator = new recoverproto.APIClient(`127.0.0.1:${port}`, atlsChannelCredentials({ validators: [new DummyValidator()] }));
    const s = sampler();
    const t0 = performance.now();
    try {
      const wrong = Array.from({ length: count }, () => recoverOnce(attacker, encodeClusterKmsUri({ key: randomBytes(32), salt: master.salt }), 120_000));
      await new Promise((r) => setTimeout(r, operatorAfterMs));
      const tOp = performance.now();
      const op = await recoverOnce(operator, encodeClusterKmsUri(master), OPERATOR_DEADLINE_MS);
      const operatorMs = Math.round(performance.now() - tOp);
      const results = await Promise.all(wrong);
      const codes: Record<string, number> = {};
      for (const e of results) codes[e ? grpc.status[e.code] : 'OK'] = (codes[e ? grpc.status[e.code] : 'OK'] ?? 0) + 1;
      return { server, op, operatorMs, codes, floodSeconds: Math.round(performance.now() - t0) / 1000, peak: s.stop(), refused: server.refusedCalls, peakRunning: server.keyChecks.peakRunning };
    } finally {
      s.stop();
      attacker.close();
      operator.close();
      await server.close();
    }
  }

  it(`control, limits off: ${CONTROL_FLOOD} wrong secrets from one address each start a cryptsetup, several at once`, async () => {
    const r = await flood({ attempts: new PeerRateLimiter(0, 1), keyChecks: new KeyCheckQueue({ capacity: Infinity, perAddress: Infinity, reserved: 0, concurrent: Infinity }) }, CONTROL_FLOOD, 200);
    figures.control = { flood: CONTROL_FLOOD, codes: r.codes, operator: r.op ? grpc.status[r.op.code] : 'OK', operatorMs: r.operatorMs, floodSeconds: r.floodSeconds, peak: r.peak };
    // The hole: nothing refuses the flood, every wrong secret reaches the disk, and checks run in parallel.
    assert.equal(r.codes.PERMISSION_DENIED ?? 0, CONTROL_FLOOD - (r.codes.FAILED_PRECONDITION ?? 0), JSON.stringify(r.codes));
    assert.equal(r.codes.RESOURCE_EXHAUSTED, undefined);
    assert.ok(r.peakRunning > 1, `key checks ran one at a time even without the limits (${r.peakRunning})`);
  });

  it(`with the limits: ${FLOOD} wrong secrets from one address get RESOURCE_EXHAUSTED after a few, one cryptsetup at a time, the operator's recover succeeds`, async () => {
    const r = await flood({}, FLOOD, 300);
    figures.limited = { flood: FLOOD, codes: r.codes, operator: r.op ? `${grpc.status[r.op.code]}: ${r.op.details}` : 'OK', operatorMs: r.operatorMs, floodSeconds: r.floodSeconds, peak: r.peak, refused: r.refused, loadavgAfter: readFileSync('/proc/loadavg', 'utf8').trim() };
    assert.equal(r.op, null, `the operator's recover failed: ${r.op?.code} ${r.op?.details}`);
    assert.ok(r.operatorMs < OPERATOR_DEADLINE_MS);
    assert.equal(r.peakRunning, 1, 'one key check at a time');
    assert.ok(r.peak.cryptsetup <= 1, `${r.peak.cryptsetup} cryptsetup processes at once`);
    // At most the burst of 5 wrong secrets reach the disk; everything else is refused before any disk work.
    assert.ok((r.codes.PERMISSION_DENIED ?? 0) <= 5, JSON.stringify(r.codes));
    assert.ok((r.codes.RESOURCE_EXHAUSTED ?? 0) >= FLOOD - 5 - (r.codes.FAILED_PRECONDITION ?? 0), JSON.stringify(r.codes));
    assert.ok((r.refused.TOO_MANY_ATTEMPTS ?? 0) > 0, JSON.stringify(r.refused));
  });

  it('a 1-byte master secret and a short salt are INVALID_ARGUMENT before any disk work', async () => {
    const server = new RecoveryServer(disk, logger);
    const port = await server.listen('127.0.0.1:0', atlsServerCredentials({ issuer: new DummyIssuer() }));
    const client = new recoverproto.APIClient(`127.0.0.1:${port}`, atlsChannelCredentials({ validators: [new DummyValidator()] }));
    const s = sampler();
    try {
      for (const [name, ms, want] of [
        ['1-byte secret', { key: Buffer.alloc(1, 1), salt: master.salt }, /master secret is 1 bytes/],
        ['16-byte salt', { key: master.key, salt: Buffer.alloc(16, 1) }, /salt is 16 bytes/],
      ] as const) {
        const err = await recoverOnce(client, encodeClusterKmsUri(ms), 10_000);
        assert.equal(err?.code, grpc.status.INVALID_ARGUMENT, `${name}: ${err?.details}`);
        assert.match(err!.details, want);
      }
      assert.equal(s.stop().cryptsetup, 0, 'no cryptsetup ran');
      assert.equal(server.keyChecks.peakRunning, 0);
    } finally {
      client.close();
      await server.close();
    }
  });
});
