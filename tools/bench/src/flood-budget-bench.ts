// The global attestation budget under a 50-address flood (docs/adr/0029), measured against the
// same flood without it, in the same run.
//
//   npx tsx tools/bench/src/flood-budget-bench.ts     (env: ROUNDS=2 SECONDS=6 LOOPS=2
//   TIGHT_VALIDATIONS=10 TIGHT_HANDSHAKES=20)
//
// A client-attested aTLS server (the joinservice's credentials, dummy validator) runs in this
// process; the attacker (libs/atls/src/budget-attacker.mjs) runs in its own, from 127.0.0.10-59,
// LOOPS loops per address, each a fresh TLS connection presenting a client certificate whose
// document is over another nonce (validated and rejected). Modes, alternating per round: `off`
// (no budget, every rejection logged: before issue 37), `default` (the product's budget and
// aggregated logs) and `tight` (a budget below what this attacker reaches on a loaded machine, so
// the bound shows). Per mode, medians of: the server process's CPU share of one core, validations
// and handshakes started per second, log bytes per second, a legitimate join's latency.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { DummyIssuer, DummyValidator } from '@asterism/attestation';
import { atlsChannelCredentials, atlsServerCredentials, createAtlsCertificate, generateAtlsKey, type AtlsServerOptions } from '@asterism/atls';
import { kms } from '@asterism/proto';
import { loadAverage, median } from './stats.js';

const ROUNDS = Number(process.env.ROUNDS ?? 2);
const SECONDS = Number(process.env.SECONDS ?? 6);
const LOOPS = Number(process.env.LOOPS ?? 2);
const ADDRESSES = Array.from({ length: 50 }, (_, i) => `127.0.0.${10 + i}`);
const ATTACKER = resolve(import.meta.dirname, '..', '..', '..', 'libs', 'atls', 'src', 'budget-attacker.mjs');
const unlimited = { perSecond: Infinity, burst: Infinity, concurrent: Infinity, queue: Infinity };
const MODES: Record<string, Partial<AtlsServerOptions>> = {
  off: { budget: { handshakes: unlimited, validations: unlimited }, refusalLogIntervalMs: 0 },
  default: {},
  tight: { budget: { handshakes: { perSecond: Number(process.env.TIGHT_HANDSHAKES ?? 20), burst: 20 }, validations: { perSecond: Number(process.env.TIGHT_VALIDATIONS ?? 10), burst: 10 } } },
};

interface Sample { cpuShare: number; validationsPerSecond: number; handshakesPerSecond: number; logBytesPerSecond: number; legitMs: number; legitOk: boolean }

async function attack(port: number, certPem: string, keyPem: string): Promise<void> {
  const child = spawn(process.execPath, [ATTACKER, JSON.stringify({ port, addresses: ADDRESSES, loopsPerAddress: LOOPS, seconds: SECONDS, certPem, keyPem })], { stdio: 'ignore' });
  await new Promise((r) => child.once('close', r));
}

async function run(options: Partial<AtlsServerOptions>, cert: { pem: string; keyPem: string }): Promise<Sample> {
  let logBytes = 0;
  const count = (msg: string, fields?: Record<string, unknown>) => void (logBytes += JSON.stringify({ level: 'warn', msg, ...fields, time: new Date().toISOString() }).length + 1);
  const creds = atlsServerCredentials({ clientValidators: [new DummyValidator()], logger: { info: count, warn: count }, ...options });
  const server = new grpc.Server();
  server.addService(kms.APIService, { getDataKey: (_c: unknown, cb: grpc.sendUnaryData<kms.GetDataKeyResponse>) => cb(null, { dataKey: Buffer.alloc(16) }) });
  const port = await new Promise<number>((res, rej) => server.bindAsync('127.0.0.1:0', creds, (e, p) => (e ? rej(e) : res(p))));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const flood = attack(port, cert.pem, cert.keyPem);
  await new Promise((r) => setTimeout(r, (SECONDS * 1000) / 2));
  const client = new kms.APIClient(`127.0.0.1:${port}`, atlsChannelCredentials({ issuer: new DummyIssuer() }));
  const l0 = performance.now();
  const legitOk = await new Promise<boolean>((res) => client.getDataKey({ dataKeyId: 'k', length: 16 }, new grpc.Metadata(), { deadline: Date.now() + 10_000 }, (err) => res(!err)));
  const legitMs = Math.round(performance.now() - l0);
  client.close();
  await flood;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  server.forceShutdown();
  const per = (n: number) => Math.round(n / seconds);
  return { cpuShare: Math.round(((cpu.user + cpu.system) / 1e6 / seconds) * 100) / 100, validationsPerSecond: per(creds.budget.validations.started), handshakesPerSecond: per(creds.budget.handshakes.started), logBytesPerSecond: per(logBytes), legitMs, legitOk };
}

const key = generateAtlsKey();
const cert = { pem: (await createAtlsCertificate({ nonce: Buffer.alloc(32, 1), issuer: new DummyIssuer(), key })).pem, keyPem: key.privateKeyPem };
const loadBefore = loadAverage();
const samples: Record<string, Sample[]> = Object.fromEntries(Object.keys(MODES).map((m) => [m, []]));
for (let r = 0; r < ROUNDS; r++) for (const [mode, options] of Object.entries(MODES)) samples[mode]!.push(await run(options, cert));
for (const [mode, s] of Object.entries(samples)) {
  const m = (k: keyof Sample) => median(s.map((x) => Number(x[k])));
  console.log(JSON.stringify({ bench: 'flood-budget', mode, rounds: ROUNDS, seconds: SECONDS, addresses: ADDRESSES.length, loops: LOOPS, cpuShareOfOneCore: m('cpuShare'), validationsPerSecond: m('validationsPerSecond'), handshakesPerSecond: m('handshakesPerSecond'), logBytesPerSecond: m('logBytesPerSecond'), legitMs: m('legitMs'), legitOk: s.map((x) => x.legitOk) }));
}
console.log(JSON.stringify({ bench: 'flood-budget', loadBefore, loadAfter: loadAverage() }));
process.exit(0);
