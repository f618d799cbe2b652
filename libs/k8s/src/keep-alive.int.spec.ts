/**
 * Integration: client-node API clients against a real local HTTPS server (openssl-made
 * certificate), counting the TLS connections the server accepts.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { missingComponent } from '@asterism/testing';
import { clientsFromConfig } from './client.js';
import { KeepAliveKubeConfig } from './keep-alive.js';
import { kubeConfigFor } from './kubeconfig.js';

function opensslCertificate(): { certPem: string; keyPem: string } | string {
  const dir = mkdtempSync(join(tmpdir(), 'k8s-keepalive-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
  } catch {
    return missingComponent('openssl', 'apt-get install openssl') || 'openssl failed';
  }
  return { certPem: readFileSync(join(dir, 'cert.pem'), 'utf8'), keyPem: readFileSync(join(dir, 'key.pem'), 'utf8') };
}

const cert = opensslCertificate();

describe('KeepAliveKubeConfig (real HTTPS server)', { skip: typeof cert === 'string' ? cert : false }, () => {
  const { certPem, keyPem } = cert as { certPem: string; keyPem: string };
  let server: Server;
  let connections = 0;
  let url = '';

  before(async () => {
    server = createServer({ cert: certPem, key: keyPem }, async (req, res) => {
      const name = /\/api\/v1\/namespaces\/([^/]+)$/.exec(req.url ?? '')?.[1] ?? 'unknown';
      if (name.startsWith('slow-')) await new Promise((r) => setTimeout(r, 500));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }));
    });
    server.on('secureConnection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const plainConfig = () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: url, caData: Buffer.from(certPem).toString('base64'), skipTLSVerify: false }],
      users: [{ name: 'u', token: 'not-a-real-token' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return kc;
  };
  const cases: Array<[string, () => k8s.KubeConfig, number]> = [
    ['plain client-node KubeConfig: a new TLS connection per request (the problem)', plainConfig, 10],
    ['kubeConfigFor: one connection for all requests', () => kubeConfigFor(url, certPem, { token: 'not-a-real-token' }), 1],
    ['clientsFromConfig converts a plain KubeConfig', () => clientsFromConfig(plainConfig()).config, 1],
  ];
  for (const [name, makeConfig, expected] of cases) {
    it(name, async () => {
      const config = makeConfig();
      const core = config.makeApiClient(k8s.CoreV1Api);
      const before = connections;
      for (let i = 0; i < 10; i++) assert.equal((await core.readNamespace({ name: `ns-${i}` })).metadata?.name, `ns-${i}`);
      assert.equal(connections - before, expected);
      if (config instanceof KeepAliveKubeConfig) config.destroy();
    });
  }

  it('closes idle pooled connections after idleSocketMs but never a busy one', async () => {
    const kc = KeepAliveKubeConfig.from(plainConfig(), { idleSocketMs: 200 });
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const before = connections;
    assert.equal((await core.readNamespace({ name: 'slow-1' })).metadata?.name, 'slow-1', 'a 500 ms answer outlives the 200 ms idle timeout');
    assert.equal((await core.readNamespace({ name: 'fast-1' })).metadata?.name, 'fast-1');
    assert.equal(connections - before, 1, 'still one connection');
    await new Promise((r) => setTimeout(r, 400));
    await core.readNamespace({ name: 'fast-2' });
    assert.equal(connections - before, 2, 'the idle connection was closed, a new one opened');
    kc.destroy();
  });

  it('shares the pool between the clients of one KubeConfig, not between KubeConfigs', async () => {
    const a = KeepAliveKubeConfig.from(plainConfig());
    const b = KeepAliveKubeConfig.from(plainConfig());
    const before = connections;
    await a.makeApiClient(k8s.CoreV1Api).readNamespace({ name: 'a1' });
    await a.makeApiClient(k8s.CoreV1Api).readNamespace({ name: 'a2' });
    await b.makeApiClient(k8s.CoreV1Api).readNamespace({ name: 'b1' });
    assert.equal(connections - before, 2);
    a.destroy();
    b.destroy();
  });
});
