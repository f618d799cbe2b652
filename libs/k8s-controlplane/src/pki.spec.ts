import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { buildKubeconfig } from './kubeconfig.js';
import { createControlPlanePki } from './pki.js';

describe('createControlPlanePki', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pki-'));
  const pki = await createControlPlanePki(dir, { apiServerIps: ['192.0.2.5'] });

  it('writes the kubeadm layout with mode 0600', () => {
    for (const f of ['ca.crt', 'ca.key', 'sa.key', 'sa.pub', 'front-proxy-ca.crt', 'front-proxy-ca.key', 'etcd/ca.crt', 'etcd/ca.key', 'apiserver.crt']) {
      assert.equal(statSync(join(dir, 'pki', f)).mode & 0o777, 0o600, f);
    }
  });

  it('produces certificates openssl verifies against their CA', () => {
    for (const [ca, leaf] of [
      ['ca.crt', 'apiserver.crt'],
      ['ca.crt', 'admin.crt'],
      ['front-proxy-ca.crt', 'front-proxy-client.crt'],
    ]) {
      const out = execFileSync('openssl', ['verify', '-CAfile', join(dir, 'pki', ca!), join(dir, 'pki', leaf!)]).toString();
      assert.match(out, /: OK/);
    }
  });

  it('puts the right names and usages into the certificates', () => {
    const api = new X509Certificate(readFileSync(join(dir, 'pki/apiserver.crt')));
    assert.match(api.subjectAltName ?? '', /IP Address:127\.0\.0\.1/);
    assert.match(api.subjectAltName ?? '', /IP Address:192\.0\.2\.5/);
    assert.match(api.subjectAltName ?? '', /DNS:kubernetes\.default\.svc\.cluster\.local/);
    const text = execFileSync('openssl', ['x509', '-in', join(dir, 'pki/admin.crt'), '-noout', '-text']).toString();
    assert.match(text, /Subject: CN ?= ?kubernetes-admin, O ?= ?system:masters/);
    assert.match(text, /TLS Web Client Authentication/);
    const ca = new X509Certificate(pki.ca.certPem);
    assert.equal(ca.ca, true);
    assert.ok(new X509Certificate(pki.admin.certPem).verify(ca.publicKey));
  });

  it('builds a kubeconfig with embedded CA and client credentials', () => {
    interface Kubeconfig {
      'current-context': string;
      clusters: [{ cluster: { 'certificate-authority-data': string } }];
      users: [{ user: { 'client-key-data': string } }];
    }
    const kc = parse(buildKubeconfig({ server: 'https://127.0.0.1:6443', caPem: pki.ca.certPem, userName: 'u', clientCertPem: pki.admin.certPem, clientKeyPem: pki.admin.keyPem })) as Kubeconfig;
    assert.equal(kc['current-context'], 'u@kubernetes');
    assert.equal(Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64').toString(), pki.ca.certPem);
    assert.ok(kc.users[0].user['client-key-data']);
  });
});
