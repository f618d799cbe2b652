import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import type * as net from 'node:net';
import * as tls from 'node:tls';
import { after, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { DummyIssuer, DummyValidator, type Validator } from '@asterism/attestation';
import { init, kms } from '@asterism/proto';
import { createAtlsCertificate, generateAtlsKey, toPem, type AtlsKey } from './certificate.js';
import { atlsChannelCredentials, atlsServerCredentials, type AtlsServerOptions, type AtlsChannelOptions } from './index.js';
import { dummyValidatorAs, getDataKey, hangingValidator, initStream, startStubServer, TamperingIssuer, type StubServer } from './services.fixture.js';

const servers: StubServer[] = [];
const clients: grpc.Client[] = [];
after(async () => {
  for (const c of clients) c.close();
  await Promise.all(servers.map((s) => s.close()));
});

async function setup(serverOpts: AtlsServerOptions, clientOpts: AtlsChannelOptions) {
  const creds = atlsServerCredentials(serverOpts);
  const s = await startStubServer(creds);
  servers.push(s);
  const channel = atlsChannelCredentials(clientOpts);
  const kmsClient = new kms.APIClient(s.address, channel);
  const initClient = new init.APIClient(s.address, channel);
  clients.push(kmsClient, initClient);
  return { creds, s, kmsClient, initClient };
}

const dummy = () => ({ issuer: new DummyIssuer(), validators: [new DummyValidator()] });

describe('Node↔Node aTLS: modes that must succeed', () => {
  const modes: Array<{ name: string; server: AtlsServerOptions; client: AtlsChannelOptions; via: string }> = [
    { name: 'server attested', server: { issuer: dummy().issuer }, client: { validators: dummy().validators }, via: 'n/a' },
    { name: 'client attested (exporter)', server: { clientValidators: dummy().validators }, client: { issuer: dummy().issuer }, via: 'exporter' },
    {
      name: 'mutual',
      server: { issuer: dummy().issuer, clientValidators: dummy().validators },
      client: { issuer: dummy().issuer, validators: dummy().validators },
      via: 'exporter',
    },
    { name: 'no verification (DialNoVerify)', server: {}, client: {}, via: 'n/a' },
  ];
  for (const m of modes) {
    it(`${m.name}: unary and server-streaming calls succeed`, async () => {
      const { s, kmsClient, initClient } = await setup(m.server, m.client);
      const unary = await getDataKey(kmsClient, 'disk');
      assert.ok(unary.ok, JSON.stringify(unary));
      assert.equal(unary.value.length, 16);
      const again = await getDataKey(kmsClient, 'disk');
      assert.ok(again.ok && again.value.equals(unary.value));
      const stream = await initStream(initClient);
      assert.ok(stream.ok, JSON.stringify(stream));
      assert.equal(stream.value.length, 3);
      assert.equal(stream.value[2]!.initSuccess?.kubeconfig.toString(), 'c1');
      assert.deepEqual(new Set(s.vias), new Set([m.via]));
    });
  }
});

/** A TLS server that is not ours: serves whatever certificate `make` returns for the SNI nonce. */
async function rogueServer(make: (nonce: Buffer) => Promise<{ der: Buffer; pem: string; key: { privateKeyPem: string } }>): Promise<{ address: string; close(): void }> {
  const server = http2.createSecureServer({
    SNICallback: (servername, cb) => {
      make(Buffer.from(servername, 'base64')).then(
        (c) => cb(null, tls.createSecureContext({ key: c.key.privateKeyPem, cert: c.pem })),
        (e: Error) => cb(e),
      );
    },
  });
  server.on('stream', (stream) => stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '0' }, { endStream: true }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { address: `127.0.0.1:${port}`, close: () => server.close() };
}

function flipLastByte(c: { der: Buffer; pem: string; key: AtlsKey }) {
  const der = Buffer.from(c.der);
  der[der.length - 1]! ^= 0x01;
  return { der, pem: toPem(der), key: c.key };
}

describe('Node client rejects a bad server before any RPC (UNAVAILABLE + reason code)', () => {
  const HOUR = 3600_000;
  const cases: Array<{ name: string; make: (nonce: Buffer) => Promise<{ der: Buffer; pem: string; key: AtlsKey }>; validators?: Validator[]; code: string; text?: RegExp }> = [
    { name: 'document from another connection', make: replayingMaker(), code: 'ATTESTATION_INVALID', text: /NONCE_MISMATCH/ },
    { name: 'wrong nonce', make: (n) => createAtlsCertificate({ nonce: n, issuer: new TamperingIssuer('random-nonce') }), code: 'ATTESTATION_INVALID', text: /invalid nonce/ },
    { name: 'wrong key binding', make: (n) => createAtlsCertificate({ nonce: n, issuer: new TamperingIssuer('random-user-data') }), code: 'USER_DATA_MISMATCH' },
    { name: 'expired certificate', make: (n) => createAtlsCertificate({ nonce: n, issuer: new DummyIssuer(), now: new Date(Date.now() - 3 * HOUR) }), code: 'CERT_EXPIRED' },
    { name: 'not yet valid certificate', make: (n) => createAtlsCertificate({ nonce: n, issuer: new DummyIssuer(), now: new Date(Date.now() + 3 * HOUR) }), code: 'CERT_NOT_YET_VALID' },
    { name: 'certificate not signed by its key', make: async (n) => flipLastByte(await createAtlsCertificate({ nonce: n, issuer: new DummyIssuer() })), code: 'CERT_SIGNATURE_INVALID' },
    { name: 'certificate without attestation document', make: (n) => createAtlsCertificate({ nonce: n }), code: 'NO_COMPATIBLE_DOCUMENT', text: /got extension OIDs \[\]string\{\}/ },
    {
      name: 'document of an incompatible variant',
      make: (n) => createAtlsCertificate({ nonce: n, issuer: new DummyIssuer() }),
      validators: [dummyValidatorAs('qemu-vtpm'), dummyValidatorAs('azure-sev-snp')],
      code: 'NO_COMPATIBLE_DOCUMENT',
      text: /got extension OIDs \[\]string\{"1\.3\.9900\.1\.1"\}/,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const rogue = await rogueServer(c.make);
      try {
        const connect = () => {
          const client = new kms.APIClient(rogue.address, atlsChannelCredentials({ validators: c.validators ?? [new DummyValidator()] }));
          clients.push(client);
          return client;
        };
        if (c.name === 'document from another connection') {
          // The first connection gets a valid document (the rogue then answers without a message).
          assert.equal(((await getDataKey(connect())) as { code?: number }).code, grpc.status.UNIMPLEMENTED);
        }
        const out = await getDataKey(connect());
        assert.equal(out.ok, false);
        assert.ok(!out.ok);
        assert.equal(out.code, grpc.status.UNAVAILABLE);
        assert.match(out.details, new RegExp(`\\[${c.code}\\]`));
        if (c.text) assert.match(out.details, c.text);
      } finally {
        rogue.close();
      }
    });
  }

  it('a server validator that never answers times out', async () => {
    const { kmsClient } = await setup({ issuer: new DummyIssuer() }, { validators: [hangingValidator()], validationTimeoutMs: 150 });
    const out = await getDataKey(kmsClient);
    assert.ok(!out.ok);
    assert.equal(out.code, grpc.status.UNAVAILABLE);
    assert.match(out.details, /\[VALIDATION_TIMEOUT\].*150 ms/);
  });
});

// The first call records the document issued over its nonce; later connections get that one again.
function replayingMaker() {
  const issuer = new TamperingIssuer('replay-first');
  const key = generateAtlsKey();
  return (n: Buffer) => createAtlsCertificate({ nonce: n, issuer, key });
}

describe('server rejects unattested clients (UNAUTHENTICATED + x-atls-reason)', () => {
  const cases: Array<{ name: string; client: () => AtlsChannelOptions; server?: Partial<AtlsServerOptions>; code: string; text?: RegExp; twoChannels?: boolean }> = [
    { name: 'no client evidence where required', client: () => ({}), code: 'NO_CLIENT_EVIDENCE' },
    { name: 'evidence from another connection', client: () => ({ issuer: new TamperingIssuer('replay-first') }), code: 'ATTESTATION_INVALID', text: /NONCE_MISMATCH/, twoChannels: true },
    { name: 'evidence over a wrong nonce', client: () => ({ issuer: new TamperingIssuer('random-nonce') }), code: 'ATTESTATION_INVALID', text: /invalid nonce/ },
    { name: 'evidence bound to other user data', client: () => ({ issuer: new TamperingIssuer('random-user-data') }), code: 'USER_DATA_MISMATCH' },
    { name: 'evidence of an incompatible variant', client: () => ({ issuer: new TamperingIssuer('honest', 'qemu-vtpm') }), code: 'NO_COMPATIBLE_DOCUMENT', text: /1\.3\.9900\.5\.1/ },
    { name: 'validator timeout', client: () => ({ issuer: new DummyIssuer() }), server: { clientValidators: [hangingValidator()], validationTimeoutMs: 150 }, code: 'VALIDATION_TIMEOUT' },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { s, kmsClient, initClient } = await setup({ clientValidators: [new DummyValidator()], ...c.server }, c.client());
      if (c.twoChannels) {
        const issuer = c.client().issuer!;
        const first = new kms.APIClient(s.address, atlsChannelCredentials({ issuer }));
        clients.push(first);
        assert.ok((await getDataKey(first)).ok, 'the first connection presents its own, valid evidence');
        const second = new kms.APIClient(s.address, atlsChannelCredentials({ issuer }));
        clients.push(second);
        const out = await getDataKey(second);
        assert.ok(!out.ok);
        assert.equal(out.code, grpc.status.UNAUTHENTICATED);
        assert.equal(out.reason, c.code);
        if (c.text) assert.match(out.details, c.text);
        return;
      }
      for (const out of [await getDataKey(kmsClient), await initStream(initClient)]) {
        assert.ok(!out.ok);
        assert.equal(out.code, grpc.status.UNAUTHENTICATED);
        assert.equal(out.reason, c.code);
        assert.match(out.details, new RegExp(`\\[${c.code}\\]`));
        if (c.text) assert.match(out.details, c.text);
      }
      assert.deepEqual(s.vias, [], 'no handler ran');
    });
  }
});
