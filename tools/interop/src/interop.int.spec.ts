import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { atlsChannelCredentials, atlsServerCredentials, type AtlsServerOptions } from '@asterism/atls';
import { DummyIssuer, DummyValidator } from '@asterism/attestation';
import { init, kms } from '@asterism/proto';
import { missingComponent } from '@asterism/testing';
import { buildGoPeer, haveGo, runGoClient, startGoServer } from './go-peer.js';
import { startStubServer, type StubServer } from './stub-server.js';

const run = promisify(execFile);
const skipGo = (await haveGo()) ? false : missingComponent('Go toolchain', 'install Go ≥1.24 and put `go` on PATH');
const skipOpenssl = (await run('openssl', ['version']).then(() => true, () => false)) ? false : missingComponent('openssl', 'apt-get install openssl');

const EXPECTED_KEY = createHash('sha256').update('interop').digest().subarray(0, 16).toString('hex');
const servers: StubServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});
async function nodeServer(opts: AtlsServerOptions): Promise<StubServer> {
  const s = await startStubServer(atlsServerCredentials(opts));
  servers.push(s);
  return s;
}
const dummy = { issuer: new DummyIssuer(), validators: [new DummyValidator()] };

describe('Go (crypto/tls + grpc-go, reference protocol) client → Node server', { skip: skipGo }, () => {
  let bin: string;
  before(async () => {
    bin = await buildGoPeer();
  });

  it('server-attested: unary and server-streaming calls succeed, no certificate requested', async () => {
    const s = await nodeServer({ issuer: dummy.issuer });
    const unary = await runGoClient(bin, s.address, ['-verify']);
    assert.ok(unary.ok, JSON.stringify(unary));
    assert.equal(unary.dataKey, EXPECTED_KEY);
    assert.equal(unary.certRequested, false);
    const stream = await runGoClient(bin, s.address, ['-verify', '-method', 'init']);
    assert.ok(stream.ok, JSON.stringify(stream));
    assert.equal(stream.messages?.length, 3);
    assert.equal(init.InitResponse.decode(Buffer.from(stream.messages![2]!, 'hex')).initSuccess?.kubeconfig.toString(), 'interop');
  });

  for (const tls of ['TLS 1.3', 'TLS 1.2']) {
    it(`mutual over ${tls}: the Go client reads the one-entry CA list and attests over the server nonce`, async () => {
      const s = await nodeServer({ issuer: dummy.issuer, clientValidators: dummy.validators });
      const flags = ['-verify', '-attest', ...(tls === 'TLS 1.2' ? ['-tls12'] : [])];
      const unary = await runGoClient(bin, s.address, flags);
      assert.ok(unary.ok, JSON.stringify(unary));
      assert.equal(unary.dataKey, EXPECTED_KEY);
      assert.equal(unary.certRequested, true);
      assert.equal(unary.acceptableCAs, 1);
      const stream = await runGoClient(bin, s.address, [...flags, '-method', 'init']);
      assert.ok(stream.ok, JSON.stringify(stream));
      assert.equal(stream.messages?.length, 3);
      assert.deepEqual(s.vias, ['certificate', 'certificate']);
    });
  }

  it('client attestation required, Go client certificate without document: UNAUTHENTICATED with reason', async () => {
    const s = await nodeServer({ issuer: dummy.issuer, clientValidators: dummy.validators });
    const out = await runGoClient(bin, s.address, ['-verify']);
    assert.equal(out.ok, false);
    assert.equal(out.code, 'Unauthenticated');
    assert.match(out.message!, /\[NO_COMPATIBLE_DOCUMENT\] certificate does not contain compatible attestation documents/);
    assert.deepEqual(s.vias, []);
  });

  it('the Go client rejects a Node server without attestation', async () => {
    const s = await nodeServer({});
    const out = await runGoClient(bin, s.address, ['-verify']);
    assert.equal(out.ok, false);
    assert.equal(out.code, 'Unavailable');
    assert.match(out.message!, /compatible attestation documents/);
  });
});

describe('Node client → Go aTLS server', { skip: skipGo }, () => {
  let bin: string;
  before(async () => {
    bin = await buildGoPeer();
  });

  const call = (address: string, validators = dummy.validators) =>
    new Promise<{ err?: grpc.ServiceError; key?: Buffer }>((resolve) => {
      const client = new kms.APIClient(address, atlsChannelCredentials({ validators }));
      client.getDataKey({ dataKeyId: 'interop', length: 16 }, new grpc.Metadata(), { deadline: Date.now() + 10_000 }, (err, res) => {
        client.close();
        resolve(err ? { err } : { key: res!.dataKey });
      });
    });

  it('verifies the Go server and calls it', async () => {
    const go = await startGoServer(bin, ['-attest']);
    try {
      const out = await call(go.address);
      assert.equal(out.err, undefined, out.err?.details);
      assert.equal(out.key?.toString('hex'), EXPECTED_KEY);
    } finally {
      go.stop();
    }
  });

  it('rejects a Go server without attestation document before any RPC', async () => {
    const go = await startGoServer(bin, ['-attest=false']);
    try {
      const out = await call(go.address);
      assert.equal(out.err?.code, grpc.status.UNAVAILABLE);
      assert.match(out.err!.details, /\[NO_COMPATIBLE_DOCUMENT\]/);
    } finally {
      go.stop();
    }
  });
});

describe('openssl s_client against a client-attested Node server', { skip: skipOpenssl }, () => {
  for (const version of ['-tls1_3', '-tls1_2']) {
    it(`${version}: exactly one acceptable CA name, CN = base64 of a 32-byte nonce`, async () => {
      const s = await nodeServer({ issuer: dummy.issuer, clientValidators: dummy.validators });
      const [host, port] = s.address.split(':');
      const sni = Buffer.alloc(32, 0xfb).toString('base64');
      const child = execFile('openssl', ['s_client', '-connect', `${host}:${port}`, '-servername', sni, '-alpn', 'h2', version], { timeout: 15_000 }, () => undefined);
      child.stdin!.on('error', () => undefined); // s_client may be gone before stdin closes
      child.stdin!.end();
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      await new Promise((r) => child.once('close', r));
      const section = /Acceptable client certificate CA names\n((?:[^\n]*\n)*?)(?:Requested|Client Certificate Types|Peer signing|Shared|---)/.exec(out);
      assert.ok(section, out);
      const names = section[1]!.split('\n').filter((l) => l.trim() !== '');
      assert.equal(names.length, 1, section[1]);
      const cn = /^CN = "?([A-Za-z0-9+/=]+)"?$/.exec(names[0]!.trim());
      assert.ok(cn, names[0]);
      assert.equal(Buffer.from(cn[1]!, 'base64').length, 32);
      assert.match(out, /ALPN protocol: h2/);
    });
  }
});
