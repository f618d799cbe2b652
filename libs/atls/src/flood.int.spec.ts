import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { DummyIssuer, DummyValidator } from '@asterism/attestation';
import { init, kms } from '@asterism/proto';
import { atlsChannelCredentials, atlsServerCredentials, type AtlsServerCredentials } from './index.js';
import { getDataKey, initStream, startStubServer, type StubServer } from './test-fixtures.js';

// Bounded loopback flood (issue 15): one address (127.0.0.2) holds 2,000 connections to each server and
// hammers TLS handshakes for FLOOD_SECONDS while a legitimate peer (127.0.0.1) joins through a
// client-attested server (the joinservice's credentials) and inits through a server-attested one
// (the InitServer's). Before the per-address limits, 1,024 idle connections from one address made
// every join and init fail. The attacker runs in its own process, so the RSS below is the servers'.

const HELD = 2000;
const FLOOD_SECONDS = 8;
const HAMMER_CONCURRENCY = 64;

/** The attacker: plain Node, no project code. Prints one JSON line with its counts at the end. */
const ATTACKER = `
import * as net from 'node:net';
import * as tls from 'node:tls';
const [port1, port2] = process.argv.slice(1).map(Number);
const ports = [port1, port2];
const until = Date.now() + ${FLOOD_SECONDS * 1000};
const stats = { held: 0, maxHeld: 0, tlsHeld: 0, maxTlsHeld: 0, reconnects: 0, handshakes: 0, handshakeOk: 0 };
const sni = Buffer.alloc(32, 7).toString('base64');
// Each holder opens a TLS connection, completes the handshake if it may, then idles; when the
// server closes it (refused or reaped) it reconnects after a pause.
function hold(i) {
  if (Date.now() > until) return;
  const raw = net.connect({ host: '127.0.0.1', port: ports[i % 2], localAddress: '127.0.0.2' });
  let connected = false;
  let secure = false;
  raw.on('error', () => undefined);
  raw.on('connect', () => {
    connected = true;
    stats.held++;
    stats.maxHeld = Math.max(stats.maxHeld, stats.held);
    const t = tls.connect({ socket: raw, servername: sni, ALPNProtocols: ['h2'], rejectUnauthorized: false });
    t.on('error', () => undefined);
    t.on('secureConnect', () => { secure = true; stats.tlsHeld++; stats.maxTlsHeld = Math.max(stats.maxTlsHeld, stats.tlsHeld); });
  });
  raw.on('close', () => {
    if (connected) stats.held--;
    if (secure) stats.tlsHeld--;
    stats.reconnects++;
    setTimeout(() => hold(i), 250);
  });
}
for (let i = 0; i < ${2 * HELD}; i++) hold(i); // HELD per server
async function hammer(i) {
  while (Date.now() < until) {
    stats.handshakes++;
    await new Promise((resolve) => {
      const t = tls.connect({ host: '127.0.0.1', port: ports[i % 2], localAddress: '127.0.0.2', servername: sni, ALPNProtocols: ['h2'], rejectUnauthorized: false });
      t.on('secureConnect', () => { stats.handshakeOk++; t.destroy(); resolve(); });
      t.on('error', () => resolve());
      t.on('close', () => resolve());
      t.setTimeout(2000, () => t.destroy());
    });
  }
}
await Promise.all(Array.from({ length: ${HAMMER_CONCURRENCY} }, (_, i) => hammer(i)));
console.log(JSON.stringify(stats));
process.exit(0);
`;

const servers: StubServer[] = [];
const children: ChildProcess[] = [];
after(async () => {
  for (const c of children) c.kill('SIGKILL');
  await Promise.all(servers.map((s) => s.close()));
});

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await fn();
  return { value, ms: Math.round(performance.now() - t0) };
}

describe('aTLS servers under a one-address flood (bounded, loopback)', () => {
  it(`${HELD} held connections + handshake hammering from 127.0.0.2 for ${FLOOD_SECONDS} s: join and init from 127.0.0.1 still succeed`, async () => {
    const joinCreds = atlsServerCredentials({ clientValidators: [new DummyValidator()] });
    const initCreds = atlsServerCredentials({ issuer: new DummyIssuer() });
    const joinServer = await startStubServer(joinCreds);
    const initServer = await startStubServer(initCreds);
    servers.push(joinServer, initServer);
    const port = (s: StubServer) => s.address.split(':')[1]!;

    const rssBefore = process.memoryUsage().rss;
    const attacker = spawn(process.execPath, ['--input-type=module', '-e', ATTACKER, port(joinServer), port(initServer)], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(attacker);
    let out = '';
    attacker.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const attackerDone = new Promise<void>((resolve) => attacker.once('exit', () => resolve()));

    await new Promise((r) => setTimeout(r, 2000)); // let the flood build up
    const joins: number[] = [];
    const inits: number[] = [];
    let rssPeak = process.memoryUsage().rss;
    for (let i = 0; i < 3; i++) {
      const joinClient = new kms.APIClient(joinServer.address, atlsChannelCredentials({ issuer: new DummyIssuer() }));
      const initClient = new init.APIClient(initServer.address, atlsChannelCredentials({ validators: [new DummyValidator()] }));
      try {
        const j = await timed(() => getDataKey(joinClient));
        assert.ok(j.value.ok, `join ${i}: ${j.value.ok ? '' : j.value.details}`);
        joins.push(j.ms);
        const n = await timed(() => initStream(initClient));
        assert.ok(n.value.ok, `init ${i}: ${n.value.ok ? '' : n.value.details}`);
        inits.push(n.ms);
      } finally {
        joinClient.close();
        initClient.close();
      }
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
      await new Promise((r) => setTimeout(r, 500));
    }
    await attackerDone;
    const stats = JSON.parse(out.trim().split('\n').pop() ?? '{}') as { maxHeld: number; maxTlsHeld: number; handshakes: number; handshakeOk: number; reconnects: number };
    const refusals = (c: AtlsServerCredentials) => c.refusals;
    const figures = {
      attackerTcpConnectionsHeldMax: stats.maxHeld,
      attackerTlsConnectionsHeldMax: stats.maxTlsHeld,
      attackerReconnects: stats.reconnects,
      handshakesAttempted: stats.handshakes,
      handshakesPerSecond: Math.round(stats.handshakes / FLOOD_SECONDS),
      attackerHandshakesCompleted: stats.handshakeOk,
      joinLatencyMs: joins,
      initLatencyMs: inits,
      serverRssMiB: { before: Math.round(rssBefore / 2 ** 20), peak: Math.round(rssPeak / 2 ** 20) },
      joinServerRefusals: refusals(joinCreds),
      initServerRefusals: refusals(initCreds),
    };
    console.log(`[flood] ${JSON.stringify(figures)}`);
    assert.ok(stats.maxHeld >= 2 * HELD * 0.9, `the attacker held only ${stats.maxHeld} connections`);
    assert.ok(stats.handshakes > 0);
    const refusedTotal = Object.values(figures.joinServerRefusals).reduce((a, b) => a + b, 0) + Object.values(figures.initServerRefusals).reduce((a, b) => a + b, 0);
    assert.ok(refusedTotal > 0, 'the per-address limits refused part of the flood');
  });
});
