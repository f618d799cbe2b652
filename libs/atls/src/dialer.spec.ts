import assert from 'node:assert/strict';
import * as net from 'node:net';
import { after, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { DummyIssuer, DummyValidator } from '@asterism/attestation';
import { kms } from '@asterism/proto';
import { AtlsError, atlsServerCredentials, dialAtls } from './index.js';
import { dummyValidatorAs, getDataKey, startStubServer, type StubServer } from './test-fixtures.js';

const servers: StubServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function server(kind: 'atls' | 'plain'): Promise<string> {
  const s = await startStubServer(kind === 'atls' ? atlsServerCredentials({ issuer: new DummyIssuer() }) : grpc.ServerCredentials.createInsecure());
  servers.push(s);
  return s.address;
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

describe('dialAtls (docs/protocol/atls.md TestDial)', () => {
  const cases = [
    { name: 'Dial + aTLS server', server: 'atls', opts: { validators: [new DummyValidator()] }, ok: true },
    { name: 'Dial + plaintext server', server: 'plain', opts: { validators: [new DummyValidator()] }, ok: false },
    { name: 'DialNoVerify + aTLS server', server: 'atls', opts: {}, ok: true },
    { name: 'DialNoVerify + plaintext server', server: 'plain', opts: {}, ok: false },
    { name: 'DialInsecure + plaintext server', server: 'plain', opts: { insecure: true }, ok: true },
    { name: 'DialInsecure + aTLS server', server: 'atls', opts: { insecure: true }, ok: false },
  ] as const;
  for (const c of cases) {
    it(c.name, async () => {
      const target = await server(c.server);
      const dial = dialAtls(kms.APIClient, target, { ...c.opts, timeoutMs: 1500, initialBackoffMs: 200 });
      if (!c.ok) {
        // Plaintext against TLS never becomes READY; the dial gives up at its deadline.
        await assert.rejects(dial, (e: AtlsError) => e instanceof AtlsError && e.code === 'DIAL_FAILED');
        return;
      }
      const client = await dial;
      try {
        assert.ok((await getDataKey(client)).ok);
      } finally {
        client.close();
      }
    });
  }

  it('reports the last attempt reason code when it gives up', async () => {
    const target = await server('atls');
    await assert.rejects(dialAtls(kms.APIClient, target, { validators: [dummyValidatorAs('qemu-vtpm')], timeoutMs: 1000, initialBackoffMs: 100 }), (e: AtlsError) => {
      assert.equal(e.code, 'DIAL_FAILED');
      assert.equal(e.details.lastCode, 'NO_COMPATIBLE_DOCUMENT');
      assert.match(e.message, /last attempt: \[NO_COMPATIBLE_DOCUMENT\]/);
      return true;
    });
  });

  it('retries until a server appears', async () => {
    const port = await freePort();
    const dial = dialAtls(kms.APIClient, `127.0.0.1:${port}`, { validators: [new DummyValidator()], timeoutMs: 10_000, initialBackoffMs: 100, maxBackoffMs: 300 });
    await new Promise((r) => setTimeout(r, 500));
    const s = await startStubServer(atlsServerCredentials({ issuer: new DummyIssuer() }));
    servers.push(s);
    // Rebind the stub on the port the dialer is trying.
    await new Promise<void>((resolve, reject) =>
      s.server.bindAsync(`127.0.0.1:${port}`, atlsServerCredentials({ issuer: new DummyIssuer() }), (e) => (e ? reject(e) : resolve())),
    );
    const client = await dial;
    try {
      assert.ok((await getDataKey(client)).ok);
    } finally {
      client.close();
    }
  });

  it('stops when aborted', async () => {
    const port = await freePort();
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    await assert.rejects(dialAtls(kms.APIClient, `127.0.0.1:${port}`, { timeoutMs: 10_000, signal: ac.signal }), /aborted/);
  });
});
