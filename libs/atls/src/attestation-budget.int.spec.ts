/**
 * Bounded loopback flood from 50 addresses (127.0.0.10-59) against a client-attested aTLS server
 * (the joinservice's credentials; issue 37, docs/adr/0029). The attacker runs in its own process
 * (budget-attacker.mjs): 2 loops per address, each a fresh TLS connection presenting a client
 * certificate whose attestation document is over another nonce (validated and rejected), for FLOOD_SECONDS. Per-address admission lets every address through (each stays
 * under its own limits), so only the global budget bounds the work.
 *   1. control, budget off and every refusal logged (as before issue 37);
 *   2. with the budget (test limits: 10 handshakes/s, 5 validations/s, so that an attacker on a loaded
 *      2-core machine exceeds them): validations started stay
 *      within the token bucket, the rest is refused fast with ATTESTATION_BUDGET, a legitimate join
 *      from 127.0.0.1 succeeds, and the log grows by a few lines per reason and interval.
 * The servers' CPU share (process.cpuUsage of this process, which hosts only the server and the
 * legitimate client) and the log bytes are reported in .test-results/attestation-budget.json;
 * they are figures, not assertions.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DummyIssuer, DummyValidator, type AttestationLogger } from '@asterism/attestation';
import { kms } from '@asterism/proto';
import { createAtlsCertificate, generateAtlsKey } from './certificate.js';
import { writeFigures } from './flood.fixture.js';
import { atlsChannelCredentials, atlsServerCredentials, type AtlsServerOptions } from './index.js';
import { getDataKey, startStubServer, type StubServer } from './services.fixture.js';

const ADDRESSES = Array.from({ length: 50 }, (_, i) => `127.0.0.${10 + i}`);
const FLOOD_SECONDS = 6;
const LIMITS = { handshakes: { perSecond: 10, burst: 10 }, validations: { perSecond: 5, burst: 5 } };
const servers: StubServer[] = [];
const figures: Record<string, unknown> = { addresses: ADDRESSES.length, loopsPerAddress: 2, seconds: FLOOD_SECONDS };
after(() => {
  for (const s of servers) s.server.forceShutdown();
  console.log(`[attestation-budget] ${JSON.stringify(figures)} (${writeFigures('attestation-budget', figures)})`);
});

/** A logger that counts the JSON bytes it would write. */
function countingLogger() {
  const c = { lines: 0, bytes: 0 };
  const write = (level: string) => (msg: string, fields?: Record<string, unknown>) => {
    c.lines++;
    c.bytes += JSON.stringify({ level, msg, ...fields, component: 'joinservice', time: new Date().toISOString() }).length + 1;
  };
  const logger: AttestationLogger = { info: write('info'), warn: write('warn') };
  return { logger, c };
}

async function attack(port: number): Promise<Record<string, number>> {
  const key = generateAtlsKey();
  const cert = await createAtlsCertificate({ nonce: Buffer.alloc(32, 1), issuer: new DummyIssuer(), key });
  const args = { port, addresses: ADDRESSES, loopsPerAddress: 2, seconds: FLOOD_SECONDS, certPem: cert.pem, keyPem: key.privateKeyPem };
  const child = spawn(process.execPath, [join(import.meta.dirname, 'budget-attacker.mjs'), JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const kill = setTimeout(() => child.kill('SIGKILL'), (FLOOD_SECONDS + 30) * 1000);
  return new Promise((resolve, reject) =>
    child.once('close', (code) => {
      clearTimeout(kill);
      try {
        resolve(JSON.parse(out.trim().split('\n').pop()!) as Record<string, number>);
      } catch {
        reject(new Error(`attacker exited with ${String(code)} and no figures`));
      }
    }),
  );
}

async function flood(options: Partial<AtlsServerOptions>) {
  const { logger, c } = countingLogger();
  const creds = atlsServerCredentials({ clientValidators: [new DummyValidator()], logger, ...options });
  const server = await startStubServer(creds);
  servers.push(server);
  const port = Number(server.address.split(':')[1]);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const attacker = attack(port);
  await new Promise((r) => setTimeout(r, 2500));
  const client = new kms.APIClient(server.address, atlsChannelCredentials({ issuer: new DummyIssuer() }));
  const legit = await getDataKey(client).finally(() => client.close());
  const outcomes = await attacker;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return {
    legit,
    outcomes,
    seconds: Math.round(seconds * 10) / 10,
    cpuShareOfOneCore: Math.round(((cpu.user + cpu.system) / 1e6 / seconds) * 100) / 100,
    validationsStarted: creds.budget.validations.started,
    validationsPerSecond: Math.round(creds.budget.validations.started / seconds),
    handshakesStarted: creds.budget.handshakes.started,
    refusals: creds.refusals,
    log: { lines: c.lines, bytes: c.bytes },
    loadavg: loadavg().map((l) => l.toFixed(1)).join(' '),
  };
}

describe('aTLS server under a 50-address validation flood (bounded, loopback)', () => {
  it('control, budget off and every refusal logged: the flood is bounded by nothing but the machine', async () => {
    const r = await flood({ budget: { handshakes: { perSecond: Infinity, burst: Infinity, concurrent: Infinity, queue: Infinity }, validations: { perSecond: Infinity, burst: Infinity, concurrent: Infinity, queue: Infinity } }, refusalLogIntervalMs: 0 });
    figures.control = r;
    assert.ok(r.validationsStarted > 0 && r.outcomes.handshakes! > 0, JSON.stringify(r));
    assert.deepEqual(Object.keys(r.refusals).filter((k) => k.startsWith('BUDGET_')), []);
    // The hole in the logs: every rejected peer is a line.
    assert.ok(r.log.lines >= r.validationsStarted / 2, `${JSON.stringify(r.log)} for ${r.validationsStarted} validations`);
  });

  it(`with the budget (${LIMITS.validations.perSecond} validations/s): validations bounded, the rest refused fast with ATTESTATION_BUDGET, a legitimate join succeeds, the log stays small`, async () => {
    const r = await flood({ budget: LIMITS });
    console.log(`[attestation-budget] budget: ${JSON.stringify(r)}`);
    figures.budget = { limits: LIMITS, ...r };
    assert.ok(r.legit.ok, `legitimate join: ${JSON.stringify(r.legit)}`);
    assert.ok(Object.keys(r.refusals).some((k) => k.startsWith('BUDGET_')), `nothing refused by the budget: ${JSON.stringify(r.refusals)}`);
    // The token bucket: burst plus rate times the elapsed time (the legitimate join's validation included).
    assert.ok(r.validationsStarted <= LIMITS.validations.burst + LIMITS.validations.perSecond * r.seconds + 1, JSON.stringify(r));
    assert.ok(r.handshakesStarted <= LIMITS.handshakes.burst + LIMITS.handshakes.perSecond * r.seconds + 1, JSON.stringify(r));
    // At most 5 lines per reason, plus a summary, per 10 s interval (two loggers, a handful of reasons).
    assert.ok(r.log.lines <= 60, `${r.log.lines} log lines`);
  });
});
