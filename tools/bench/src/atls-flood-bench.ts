// Latency of a legitimate join (GetDataKey with client attestation) and init (server-attested
// stream) while one loopback address floods both aTLS servers, against the same calls without a
// flood, in the same run (rounds alternate). This is the figure libs/atls/src/flood.int.spec.ts
// reports but no longer bounds (issue 37).
//
//   flock /tmp/asterism-bench.lock npx tsx tools/bench/src/atls-flood-bench.ts
//     env: ROUNDS=3 CALLS=5 HELD=2000 HAMMERS=32
//
// The attacker is libs/atls's flood-attacker.mjs in its own process (source 127.0.0.2: held TCP+TLS
// connections and handshake loops); the servers run with the default admission limits
// (docs/adr/0007). Loopback only, bounded in time by the attacker's own duration.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { atlsChannelCredentials, atlsServerCredentials } from '@asterism/atls';
import { DummyIssuer, DummyValidator } from '@asterism/attestation';
import { init, kms } from '@asterism/proto';
import { WORKSPACE_ROOT } from '@asterism/testing';
import { loadAverage, median, quantile, ratio } from './stats.js';

const env = { ROUNDS: Number(process.env.ROUNDS ?? 3), CALLS: Number(process.env.CALLS ?? 5), HELD: Number(process.env.HELD ?? 2000), HAMMERS: Number(process.env.HAMMERS ?? 32) };
const ATTACKER = join(WORKSPACE_ROOT, 'libs', 'atls', 'src', 'flood-attacker.mjs');

/** A gRPC server with stub kms and init handlers on `credentials`; resolves with its port. */
async function stubServer(credentials: grpc.ServerCredentials): Promise<{ server: grpc.Server; port: number }> {
  const server = new grpc.Server();
  server.addService(kms.APIService, {
    getDataKey: (call: grpc.ServerUnaryCall<kms.GetDataKeyRequest, kms.GetDataKeyResponse>, cb: grpc.sendUnaryData<kms.GetDataKeyResponse>) =>
      cb(null, { dataKey: createHash('sha256').update(call.request.dataKeyId).digest().subarray(0, call.request.length) }),
  } satisfies kms.APIServer);
  server.addService(init.APIService, {
    init: (call: grpc.ServerWritableStream<init.InitRequest, init.InitResponse>) => {
      call.write({ initSuccess: { kubeconfig: Buffer.from('k'), ownerId: Buffer.alloc(0), clusterId: Buffer.alloc(32, 1) } });
      call.end();
    },
  } satisfies init.APIServer);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', credentials, (e, p) => (e ? reject(e) : resolve(p))));
  return { server, port };
}

/** One join and one init on fresh channels; their durations in ms (a failed call throws). */
async function legitimate(joinPort: number, initPort: number): Promise<{ join: number; init: number }> {
  const joinClient = new kms.APIClient(`127.0.0.1:${joinPort}`, atlsChannelCredentials({ issuer: new DummyIssuer() }));
  const initClient = new init.APIClient(`127.0.0.1:${initPort}`, atlsChannelCredentials({ validators: [new DummyValidator()] }));
  try {
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => joinClient.getDataKey({ dataKeyId: 'k', length: 16 }, new grpc.Metadata(), { deadline: Date.now() + 10_000 }, (e) => (e ? reject(e) : resolve())));
    const t1 = performance.now();
    for await (const _ of initClient.init(init.InitRequest.fromPartial({ clusterName: 'c' }), { deadline: Date.now() + 10_000 }) as AsyncIterable<init.InitResponse>) void _;
    return { join: t1 - t0, init: performance.now() - t1 };
  } finally {
    joinClient.close();
    initClient.close();
  }
}

/** Runs the attacker against both ports for `seconds`; resolves when it has exited. */
function attack(ports: number[], seconds: number): Promise<void> {
  const opts = { ports, source: '127.0.0.2', holders: env.HELD, hammers: env.HAMMERS, seconds, reconnectMs: 250, hammerTimeoutMs: 2000 };
  const child = spawn(process.execPath, [ATTACKER, JSON.stringify(opts)], { stdio: ['ignore', 'ignore', 'inherit'] });
  return new Promise((resolve) => child.once('close', () => resolve()));
}

const loadBefore = loadAverage();
const joinSrv = await stubServer(atlsServerCredentials({ clientValidators: [new DummyValidator()] }));
const initSrv = await stubServer(atlsServerCredentials({ issuer: new DummyIssuer() }));
await legitimate(joinSrv.port, initSrv.port); // warm-up
const samples = { quiet: { join: [] as number[], init: [] as number[] }, flood: { join: [] as number[], init: [] as number[] } };
const record = (into: { join: number[]; init: number[] }, r: { join: number; init: number }) => (into.join.push(r.join), into.init.push(r.init));
for (let round = 0; round < env.ROUNDS; round++) {
  for (let i = 0; i < env.CALLS; i++) record(samples.quiet, await legitimate(joinSrv.port, initSrv.port));
  const seconds = 3 + env.CALLS;
  const attacker = attack([joinSrv.port, initSrv.port], seconds);
  await new Promise((r) => setTimeout(r, 2000)); // let the flood build up
  for (let i = 0; i < env.CALLS; i++) record(samples.flood, await legitimate(joinSrv.port, initSrv.port));
  await attacker;
}
joinSrv.server.forceShutdown();
initSrv.server.forceShutdown();
const line = (name: string, q: number[], f: number[]) =>
  `${name}: no flood median ${median(q).toFixed(1)} ms (p90 ${quantile(q, 0.9).toFixed(1)}), under flood median ${median(f).toFixed(1)} ms (p90 ${quantile(f, 0.9).toFixed(1)}, max ${Math.max(...f).toFixed(0)}), ${ratio(median(f), median(q)).toFixed(1)}x (n=${f.length})`;
console.log(`aTLS legitimate calls during a one-address flood (${env.HELD} held connections and ${env.HAMMERS} handshake loops per server), ${env.ROUNDS} rounds; load before: ${loadBefore}; after: ${loadAverage()}`);
console.log(line('join (GetDataKey, client-attested)', samples.quiet.join, samples.flood.join));
console.log(line('init (stream, server-attested)', samples.quiet.init, samples.flood.init));
