// The exporter flag of the client nonce (docs/adr/0038): a client-attested server sends the
// CA-list nonce to reference-style clients (32-byte nonce) and leaves it out for clients that
// announced exporter-bound evidence (33 bytes, last byte the flag), which still attest per call.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { DummyIssuer, DummyValidator } from '@asterism/attestation';
import { generateNonce } from '@asterism/crypto';
import { missingComponent } from '@asterism/testing';
import { kms } from '@asterism/proto';
import { announcesExporterEvidence, ATLS_EXPORTER_NONCE_FLAG, exporterClientNonce } from './evidence.js';
import { atlsChannelCredentials, atlsServerCredentials } from './index.js';
import { getDataKey, startStubServer, type StubServer } from './services.fixture.js';

const servers: StubServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/** The CA names a client-attested server's CertificateRequest carries for an SNI, as openssl s_client prints them. */
function caNames(address: string, nonce: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('openssl', ['s_client', '-connect', address, '-servername', nonce.toString('base64'), '-tls1_3'], { timeout: 10_000 }, (err, stdout) => {
      // s_client exits non-zero once the server closes the unauthenticated connection; the handshake output is all we need.
      if (!stdout.includes('Server certificate')) return reject(err ?? new Error(stdout));
      resolve(stdout);
    });
    child.stdin?.end();
  });
}

function openssl(): boolean {
  try {
    return execFileSync('openssl', ['version']).length > 0;
  } catch {
    return false;
  }
}

describe('exporter flag of the client nonce', () => {
  it('is 32 random bytes and the flag, and only that shape announces exporter evidence', () => {
    const [a, b] = [exporterClientNonce(), exporterClientNonce()];
    assert.equal(a.length, 33);
    assert.equal(a[32], ATLS_EXPORTER_NONCE_FLAG);
    assert.notDeepEqual(a.subarray(0, 32), b.subarray(0, 32));
    assert.equal(a.toString('base64').length, 44, 'as long as a plain nonce in the SNI');
    assert.equal(announcesExporterEvidence(a), true);
    assert.equal(announcesExporterEvidence(generateNonce()), false, 'reference clients: 32 bytes');
    assert.equal(announcesExporterEvidence(Buffer.concat([generateNonce(), Buffer.from([2])])), false);
    assert.equal(announcesExporterEvidence(Buffer.concat([generateNonce(), Buffer.from([1, 1])])), false);
  });

  it('a client-attested server sends the CA-list nonce only to clients without the flag; flagged clients still attest', async (t) => {
    const skip = openssl() ? false : missingComponent('openssl', 'apt-get install openssl');
    if (skip) return t.skip(skip);
    const s = await startStubServer(atlsServerCredentials({ clientValidators: [new DummyValidator()] }));
    servers.push(s);
    const reference = await caNames(s.address, generateNonce());
    // openssl quotes a value with `+` or `/` in it.
    assert.match(reference, /Acceptable client certificate CA names\n\s*CN\s*=\s*"?[A-Za-z0-9+/]{43}="?\n/);
    const flagged = await caNames(s.address, exporterClientNonce());
    assert.match(flagged, /No client certificate CA names sent/);

    const client = new kms.APIClient(s.address, atlsChannelCredentials({ issuer: new DummyIssuer() }));
    try {
      const out = await getDataKey(client);
      assert.ok(out.ok, JSON.stringify(out));
      assert.deepEqual(s.vias, ['exporter']);
      const unattested = new kms.APIClient(s.address, atlsChannelCredentials({}));
      const refused = await getDataKey(unattested);
      unattested.close();
      assert.ok(!refused.ok && refused.reason === 'NO_CLIENT_EVIDENCE', JSON.stringify(refused));
    } finally {
      client.close();
    }
  });
});
