// New-channel handshake benchmark: aTLS (dummy variant) vs plain TLS, measured in the same run.
//
//   npx tsx tools/bench/src/atls-bench.ts            (env: SEQ=300 CONC=8 PAR_N=400 ROUNDS=4;
//   SERVER_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", are Node arguments of both servers)
//
// Two server processes (plain TLS with a static ECDSA certificate, and aTLS) run as children; this
// process is the client. Every call uses a NEW channel (`grpc.use_local_subchannel_pool`, no
// reuse): TCP + TLS handshake + attestation + one unary kms.API/GetDataKey, then close. Sequential
// samples alternate between the modes in ROUNDS blocks so drift hits both alike; then CONC loops
// run PAR_N calls per mode for throughput. Client and servers share the machine's cores.
import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, webcrypto } from 'node:crypto';
import { createInterface } from 'node:readline';
import * as grpc from '@grpc/grpc-js';
import * as x509 from '@peculiar/x509';
import { atlsChannelCredentials, atlsServerCredentials } from '@asterism/atls';
import { DummyIssuer, DummyValidator } from '@asterism/attestation';
import { kms } from '@asterism/proto';
import { loadAverage, median, quantile, ratio } from './stats.js';

type Mode = 'plain' | 'atls';

/** Static ECDSA P-256 certificate for `localhost` (self-signed, used as its own trust anchor). */
async function plainCertificate(): Promise<{ keyPem: string; certPem: string }> {
  x509.cryptoProvider.set(webcrypto as never);
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=localhost',
    notBefore: new Date(Date.now() - 3600_000),
    notAfter: new Date(Date.now() + 86_400_000),
    keys: keys as never,
    signingAlgorithm: alg,
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'localhost' }]), new x509.BasicConstraintsExtension(true)],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64');
  return { keyPem: `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`, certPem: cert.toString('pem') };
}

async function serve(mode: Mode, keyPem?: string, certPem?: string): Promise<void> {
  const server = new grpc.Server();
  server.addService(kms.APIService, {
    getDataKey: (call: grpc.ServerUnaryCall<kms.GetDataKeyRequest, kms.GetDataKeyResponse>, cb: grpc.sendUnaryData<kms.GetDataKeyResponse>) =>
      cb(null, { dataKey: createHash('sha256').update(call.request.dataKeyId).digest().subarray(0, call.request.length) }),
  } satisfies kms.APIServer);
  const creds =
    mode === 'atls'
      ? // One client address opens every connection: lift the per-address admission limits (docs/adr/0007).
        atlsServerCredentials({ issuer: new DummyIssuer(), maxConnections: 4096, admission: { handshakesPerSecondPerAddress: 1e6, handshakeBurstPerAddress: 1e6, maxConnectionsPerAddress: 4096, maxPendingHandshakesPerAddress: 64 } })
      : grpc.ServerCredentials.createSsl(null, [{ private_key: Buffer.from(keyPem!), cert_chain: Buffer.from(certPem!) }]);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', creds, (e, p) => (e ? reject(e) : resolve(p))));
  process.stdout.write(`PORT ${port}\n`);
  // A normal exit on SIGTERM, so that --cpu-prof (SERVER_NODE_ARGS) writes its profile.
  process.once('SIGTERM', () => process.exit(0));
}

async function startServer(mode: Mode, cert: { keyPem: string; certPem: string }): Promise<{ port: number; child: ChildProcess }> {
  const nodeArgs = (process.env.SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', import.meta.filename, 'serve', mode], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_KEY: cert.keyPem, BENCH_CERT: cert.certPem },
  });
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (l) => {
      const m = /^PORT (\d+)$/.exec(l);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (c) => reject(new Error(`${mode} server exited with ${c}`)));
  });
  return { port, child };
}

/** One unary call on a brand-new channel; returns milliseconds. */
function oneCall(port: number, credentials: () => grpc.ChannelCredentials, extra: grpc.ChannelOptions): Promise<number> {
  const t0 = performance.now();
  const client = new kms.APIClient(`127.0.0.1:${port}`, credentials(), { 'grpc.use_local_subchannel_pool': 1, ...extra });
  return new Promise((resolve, reject) =>
    client.getDataKey({ dataKeyId: 'bench', length: 32 }, (err) => {
      client.close();
      if (err) reject(err);
      else resolve(performance.now() - t0);
    }),
  );
}

async function main(): Promise<void> {
  const SEQ = Number(process.env.SEQ ?? 300);
  const CONC = Number(process.env.CONC ?? 8);
  const PAR_N = Number(process.env.PAR_N ?? 400);
  const ROUNDS = Number(process.env.ROUNDS ?? 4);
  const loadBefore = loadAverage();
  const cert = await plainCertificate();
  const servers = { plain: await startServer('plain', cert), atls: await startServer('atls', cert) };
  const validators = [new DummyValidator()];
  // A credentials object per call, as a CLI/joining node would have per dial.
  const setups: Record<Mode, { creds: () => grpc.ChannelCredentials; opts: grpc.ChannelOptions }> = {
    plain: { creds: () => grpc.credentials.createSsl(Buffer.from(cert.certPem)), opts: { 'grpc.ssl_target_name_override': 'localhost', 'grpc.default_authority': 'localhost' } },
    atls: { creds: () => atlsChannelCredentials({ validators }), opts: {} },
  };
  const call = (m: Mode) => oneCall(servers[m].port, setups[m].creds, setups[m].opts);
  try {
    for (const m of ['plain', 'atls'] as const) for (let i = 0; i < 30; i++) await call(m);
    const seq: Record<Mode, number[]> = { plain: [], atls: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const m of (r % 2 === 0 ? ['plain', 'atls'] : ['atls', 'plain']) as Mode[]) {
        for (let i = 0; i < SEQ / ROUNDS; i++) seq[m].push(await call(m));
      }
    }
    const par: Record<Mode, number> = { plain: 0, atls: 0 };
    for (const m of ['plain', 'atls', 'atls', 'plain'] as const) {
      let left = PAR_N / 2;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: CONC }, async () => {
          while (left-- > 0) await call(m);
        }),
      );
      par[m] += (PAR_N / 2) / ((performance.now() - t0) / 1000) / 2;
    }
    const row = (m: Mode) => {
      const med = median(seq[m]);
      return { mode: m, 'seq median ms': med.toFixed(2), 'seq p90 ms': quantile(seq[m], 0.9).toFixed(2), 'seq /s': (1000 / med).toFixed(0), [`${CONC}-concurrent /s`]: par[m].toFixed(0) };
    };
    console.log(`new-channel handshakes, ${SEQ} sequential + ${PAR_N} at ${CONC} concurrent per mode, Node ${process.version}; before: ${loadBefore}; after: ${loadAverage()}`);
    console.table([row('plain'), row('atls')]);
    console.log(`aTLS / plain TLS throughput ratio: sequential (median) ${ratio(median(seq.plain), median(seq.atls))}, ${CONC}-concurrent ${ratio(par.atls, par.plain)}`);
  } finally {
    for (const { child } of [servers.plain, servers.atls]) {
      child.kill();
      await new Promise((r) => child.once('exit', r));
    }
  }
}

if (process.argv[2] === 'serve') await serve(process.argv[3] as Mode, process.env.BENCH_KEY, process.env.BENCH_CERT);
else await main();
