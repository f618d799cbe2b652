import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import * as tls from 'node:tls';
import { after, describe, it } from 'node:test';
import { DummyIssuer, DummyValidator, type Issuer } from '@asterism/attestation';
import { generateNonce } from '@asterism/crypto';
import { fastPathAvailable, ServerContexts } from './server-contexts.js';
import { parseAtlsCertificate, verifyEmbeddedDocument } from './verify.js';

/** A DummyIssuer whose documents arrive after a random delay, so that connections interleave. */
class SlowIssuer implements Issuer {
  readonly #inner = new DummyIssuer();
  readonly variant = this.#inner.variant;
  async issue(userData: Uint8Array, nonce: Uint8Array): Promise<Uint8Array> {
    await new Promise((r) => setTimeout(r, Math.random() * 15));
    return this.#inner.issue(userData, nonce);
  }
}

const servers: tls.Server[] = [];
after(() => {
  for (const s of servers) s.close();
});

/** A TLS server whose SNICallback takes its context from `contexts` like AtlsServerCredentials does. */
async function serve(contexts: ServerContexts, clientAttested: boolean): Promise<number> {
  const server = tls.createServer({
    SNICallback: (servername, cb) => {
      contexts.forConnection(Buffer.from(servername, 'base64'), clientAttested ? generateNonce() : undefined).then(
        (install) => cb(null, install()),
        (err: unknown) => cb(err as Error),
      );
    },
    requestCert: clientAttested,
    rejectUnauthorized: false,
  });
  server.on('secureConnection', (s) => s.end());
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** One handshake with a fresh nonce; returns the server's certificate DER. */
async function handshake(port: number): Promise<{ nonce: Buffer; der: Buffer }> {
  const nonce = generateNonce();
  const socket = tls.connect({ host: '127.0.0.1', port, servername: nonce.toString('base64'), rejectUnauthorized: false });
  await once(socket, 'secureConnect');
  const der = socket.getPeerX509Certificate()!.raw;
  socket.destroy();
  return { nonce, der };
}

describe('ServerContexts', () => {
  it('this Node has the certificate swap the server-attested fast path uses', () => assert.equal(fastPathAvailable, true));

  it('server-attested: 48 interleaved handshakes each get a certificate with a document over their own nonce, one key for all', async () => {
    const port = await serve(new ServerContexts({ issuer: new SlowIssuer(), clientAttested: false }), false);
    const results = await Promise.all(Array.from({ length: 48 }, () => handshake(port)));
    const keys = new Set<string>();
    for (const { nonce, der } of results) {
      const cert = parseAtlsCertificate(der);
      await verifyEmbeddedDocument(cert, [new DummyValidator()], nonce);
      keys.add(cert.publicKeyHash.toString('hex'));
    }
    assert.equal(new Set(results.map((r) => r.der.toString('hex'))).size, 48, 'a certificate per connection');
    assert.equal(keys.size, 1, 'one server key within its lifetime');
  });

  it('without an issuer: one context and one document-less certificate for every connection of a key', async () => {
    const contexts = new ServerContexts({ clientAttested: false });
    const [a, b] = [await contexts.forConnection(generateNonce()), await contexts.forConnection(generateNonce())];
    assert.equal(a(), b());
    const port = await serve(contexts, false);
    const [x, y] = await Promise.all([handshake(port), handshake(port)]);
    assert.deepEqual(x.der, y.der);
    assert.deepEqual(parseAtlsCertificate(x.der).extensions, []);
  });

  it('client-attested: a context per connection (its CA list carries that connection\'s nonce)', async () => {
    const contexts = new ServerContexts({ clientAttested: true });
    const a = await contexts.forConnection(generateNonce(), generateNonce());
    const b = await contexts.forConnection(generateNonce(), generateNonce());
    assert.notEqual(a(), b());
    // An exporter client (no server nonce, docs/adr/0038) shares one context, without a CA list.
    const [c, d] = [await contexts.forConnection(generateNonce()), await contexts.forConnection(generateNonce())];
    assert.equal(c(), d());
    assert.notEqual(c(), a());
    await assert.rejects(new ServerContexts({ clientAttested: false }).forConnection(generateNonce(), generateNonce()), /needs a client-attested/);
    const port = await serve(contexts, true);
    const [x, y] = await Promise.all([handshake(port), handshake(port)]);
    assert.deepEqual(x.der, y.der, 'without an issuer the certificate is kept with the key');
  });

  it('renews the key once its lifetime is over', async () => {
    let now = 0;
    const contexts = new ServerContexts({ issuer: new DummyIssuer(), clientAttested: false, keyLifetimeMs: 1000, now: () => now });
    const port = await serve(contexts, false);
    const spki = async () => parseAtlsCertificate((await handshake(port)).der).publicKeyHash.toString('hex');
    const first = await spki();
    now = 999;
    assert.equal(await spki(), first);
    now = 1000;
    assert.notEqual(await spki(), first);
  });
});
