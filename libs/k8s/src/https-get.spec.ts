import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpsGetText } from './https-get.js';

describe('httpsGetText', () => {
  let server: Server;
  let base: string;
  let caPem: string;

  before(async () => {
    // A self-signed server certificate made by openssl (not by our code).
    const dir = mkdtempSync(join(tmpdir(), 'https-get-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-days', '1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    caPem = readFileSync(join(dir, 'cert.pem'), 'utf8');
    const keyPem = readFileSync(join(dir, 'key.pem'), 'utf8');
    rmSync(dir, { recursive: true, force: true });
    server = createServer({ cert: caPem, key: keyPem }, (req, res) => {
      if (req.url === '/hang') return; // never answers
      res.writeHead(req.url === '/missing' ? 404 : 200).end(`path ${req.url} ünïcode`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  it('returns status and UTF-8 body for any status', async () => {
    assert.deepEqual(await httpsGetText(`${base}/x`, { rejectUnauthorized: false }), { status: 200, body: 'path /x ünïcode' });
    assert.equal((await httpsGetText(`${base}/missing`, { rejectUnauthorized: false })).status, 404);
  });

  it('verifies the server against a given CA, and refuses an untrusted one by default', async () => {
    assert.equal((await httpsGetText(new URL('/ca', base), { ca: caPem })).status, 200);
    await assert.rejects(httpsGetText(`${base}/x`), /self-signed|self signed/);
  });

  it('fails a silent server after the timeout and honours an abort signal', async () => {
    await assert.rejects(httpsGetText(`${base}/hang`, { rejectUnauthorized: false, timeoutMs: 100 }), /timeout/);
    await assert.rejects(httpsGetText(`${base}/hang`, { rejectUnauthorized: false, signal: AbortSignal.timeout(100) }), (err: Error) => err.name === 'AbortError' || /abort/i.test(err.message));
  });
});
