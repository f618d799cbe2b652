import assert from 'node:assert/strict';
import { once } from 'node:events';
import * as net from 'node:net';
import { after, describe, it } from 'node:test';
import * as tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { DummyIssuer, DummyValidator, type Issuer } from '@asterism/attestation';
import { kms } from '@asterism/proto';
import { atlsChannelCredentials, atlsServerCredentials, type AtlsServerOptions } from './index.js';
import { getDataKey, startStubServer, TamperingIssuer, type StubServer } from './services.fixture.js';

const servers: StubServer[] = [];
const sockets: tls.TLSSocket[] = [];
after(async () => {
  for (const s of sockets) s.destroy();
  await Promise.all(servers.map((s) => s.close()));
});

async function serve(opts: AtlsServerOptions) {
  const creds = atlsServerCredentials(opts);
  const s = await startStubServer(creds);
  servers.push(s);
  return { creds, s };
}

/** A raw TLS client that completes the handshake (or fails) and keeps the connection open. */
function rawConnect(address: string, servername = Buffer.alloc(32, 3).toString('base64')): Promise<tls.TLSSocket> {
  const [host, port] = address.split(':');
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host, port: Number(port), servername, ALPNProtocols: ['h2'], rejectUnauthorized: false }, () => resolve(s));
    s.resume(); // read, so the server's close is noticed
    sockets.push(s);
    s.once('error', reject);
  });
}

async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('server connection state and limits', () => {
  it('forgets a connection when it closes', async () => {
    const { creds, s } = await serve({ issuer: new DummyIssuer(), clientValidators: [new DummyValidator()] });
    const client = new kms.APIClient(s.address, atlsChannelCredentials({ issuer: new DummyIssuer(), validators: [new DummyValidator()] }));
    assert.ok((await getDataKey(client)).ok);
    assert.equal(creds.connectionCount, 1);
    client.close();
    await until(() => creds.connectionCount === 0);
  });

  it('refuses connections beyond maxConnections and accepts again after they close', async () => {
    const { creds, s } = await serve({ issuer: new DummyIssuer(), maxConnections: 3 });
    const held = await Promise.all([rawConnect(s.address), rawConnect(s.address), rawConnect(s.address)]);
    assert.equal(creds.connectionCount, 3);
    await assert.rejects(rawConnect(s.address));
    for (const h of held) h.destroy();
    await until(() => creds.connectionCount === 0);
    (await rawConnect(s.address)).destroy();
  });

  it('refuses handshakes beyond maxPendingHandshakes while the issuer is slow', async () => {
    const slow: Issuer = { variant: new DummyIssuer().variant, issue: async (u, n) => (await new Promise((r) => setTimeout(r, 300)), new DummyIssuer().issue(u, n)) };
    const { s } = await serve({ issuer: slow, maxPendingHandshakes: 1 });
    const results = await Promise.allSettled([rawConnect(s.address), rawConnect(s.address)]);
    assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
  });

  it('refuses a server name that is not a base64 nonce', async () => {
    const { s } = await serve({ issuer: new DummyIssuer() });
    await assert.rejects(rawConnect(s.address, 'example.com'));
  });

  it('closes a connection that does not prove client attestation in time', async () => {
    const { creds, s } = await serve({ clientValidators: [new DummyValidator()], unverifiedConnectionTimeoutMs: 200 });
    const sock = await rawConnect(s.address);
    assert.equal(creds.connectionCount, 1);
    await once(sock, 'close');
    await until(() => creds.connectionCount === 0);
  });

  // A TCP connection that never completes a ClientHello reaches no admission check (grpc-js owns
  // the listener; the SNI callback is the first hook). Node's HTTP/2 server bounds it with the
  // handshake timeout, counted from accept and not reset by incoming bytes (docs/adr/0007).
  for (const [name, drip] of [
    ['a TCP connection that never sends a ClientHello', false],
    ['a connection that drips its ClientHello one byte every 100 ms', true],
  ] as const) {
    it(`closes ${name} after the handshake timeout`, async () => {
      const { creds, s } = await serve({ issuer: new DummyIssuer(), handshakeTimeoutMs: 400 });
      const [host, port] = s.address.split(':');
      const t0 = performance.now(); // before connect: the server's timer cannot start earlier
      const raw = net.connect(Number(port), host);
      raw.on('error', () => undefined);
      await once(raw, 'connect');
      const hello = Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, ...Buffer.alloc(64, 1)]);
      let sent = 0;
      const timer = drip ? setInterval(() => raw.writable && raw.write(hello.subarray(sent, ++sent)), 100) : undefined;
      try {
        await once(raw, 'close');
      } finally {
        clearInterval(timer);
      }
      const ms = performance.now() - t0;
      assert.ok(ms >= 390 && ms < 3000, `closed after ${Math.round(ms)} ms`);
      if (drip) assert.ok(sent >= 3, 'bytes kept arriving while the deadline ran');
      assert.equal(creds.connectionCount, 0, 'never admitted: no state, no certificate');
      assert.equal(creds.admitted, 0);
    });
  }

  it('uses a fresh nonce for every TCP connection, reconnects included', async () => {
    const issuer = new TamperingIssuer('honest');
    const { s } = await serve({ issuer });
    const client = new kms.APIClient(s.address, atlsChannelCredentials({ validators: [new DummyValidator()] }));
    try {
      assert.ok((await getDataKey(client)).ok);
      assert.ok((await getDataKey(client)).ok);
      assert.equal(issuer.nonces.length, 1, 'second call reuses the verified connection');
      s.server.drain(s.address, 0); // GOAWAY: the channel reconnects
      await until(() => client.getChannel().getConnectivityState(false) !== grpc.connectivityState.READY);
      assert.ok((await getDataKey(client)).ok);
      assert.equal(issuer.nonces.length, 2);
      assert.notDeepEqual(issuer.nonces[0], issuer.nonces[1]);
      assert.equal(issuer.nonces[1]!.length, 32);
    } finally {
      client.close();
    }
  });
});
