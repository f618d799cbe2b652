import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { caCertHashes, ClusterConfigurationSans, CONTROL_PLANE_FILES, ControlPlaneFilesReader, discoveryHashFromKubeconfig } from './kubeadm-files.js';

const dir = mkdtempSync(join(tmpdir(), 'kubeadm-files-'));

/** A real CA made by openssl, and its pin computed by openssl too (independent cross-check). */
function opensslCa(name: string) {
  const key = join(dir, `${name}.key`);
  const crt = join(dir, `${name}.crt`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=kubernetes', '-days', '1', '-keyout', key, '-out', crt], { stdio: 'ignore' });
  const pub = execFileSync('openssl', ['x509', '-in', crt, '-pubkey', '-noout']);
  const der = execFileSync('openssl', ['pkey', '-pubin', '-outform', 'der'], { input: pub });
  const hash = execFileSync('openssl', ['dgst', '-sha256', '-hex'], { input: der }).toString().trim().split(' ').pop();
  return { pem: readFileSync(crt, 'utf8'), pin: `sha256:${hash}` };
}

const kubeconfig = (caPem: string, current = 'admin@kubernetes') => `apiVersion: v1
kind: Config
clusters:
- name: kubernetes
  cluster:
    server: https://192.0.2.1:6443
    certificate-authority-data: ${Buffer.from(caPem).toString('base64')}
contexts:
- name: admin@kubernetes
  context: {cluster: kubernetes, user: admin}
current-context: ${current}
users:
- name: admin
  user: {token: x}
`;

describe('discovery hash (TestGetJoinToken)', () => {
  it('equals the pin openssl computes, for the current context', () => {
    const ca = opensslCa('ca');
    assert.equal(discoveryHashFromKubeconfig(kubeconfig(ca.pem)), ca.pin);
    const second = opensslCa('ca2');
    assert.deepEqual(caCertHashes(ca.pem + second.pem), [ca.pin, second.pin]);
  });

  const bad: Array<[string, string, RegExp]> = [
    ['no CA data', kubeconfig('x').replace(/certificate-authority-data: .*/, 'insecure-skip-tls-verify: true'), /no certificate-authority-data/],
    ['no cluster', 'apiVersion: v1\nkind: Config\nclusters: []\n', /no cluster/],
    ['not YAML', '::: [', /./],
    ['CA data without certificates', kubeconfig('not a certificate'), /holds no certificate/],
  ];
  for (const [name, text, message] of bad) it(`fails for ${name}`, () => assert.throws(() => discoveryHashFromKubeconfig(text), message));
});

describe('ControlPlaneFilesReader (TestGetControlPlaneCertificatesAndKeys)', () => {
  const root = join(dir, 'etc-kubernetes');
  for (const f of CONTROL_PLANE_FILES) {
    mkdirSync(dirname(join(root, 'pki', f)), { recursive: true });
    writeFileSync(join(root, 'pki', f), `content of ${f}`);
  }

  it('reads all 8 files under their relative names', async () => {
    const files = await new ControlPlaneFilesReader(root).read();
    assert.deepEqual(files.map((f) => f.name).sort(), [...CONTROL_PLANE_FILES].sort());
    assert.equal(files.find((f) => f.name === 'etcd/ca.key')?.data.toString(), 'content of etcd/ca.key');
  });

  for (const missing of ['ca.key', 'etcd/ca.crt']) {
    it(`fails when ${missing} is missing`, async () => {
      const copy = join(dir, `copy-${missing.replace('/', '-')}`);
      for (const f of CONTROL_PLANE_FILES) {
        if (f === missing) continue;
        mkdirSync(dirname(join(copy, 'pki', f)), { recursive: true });
        writeFileSync(join(copy, 'pki', f), 'x');
      }
      await assert.rejects(new ControlPlaneFilesReader(copy).read(), new RegExp(`reading ${missing}: ENOENT`));
      rmSync(copy, { recursive: true });
    });
  }
});

describe('ClusterConfigurationSans', () => {
  it('reads apiServer.certSANs (non-strings become "")', async () => {
    const p = join(dir, 'ClusterConfiguration');
    writeFileSync(p, 'apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer:\n  certSANs: ["*", 5, "10.0.0.1"]\n');
    assert.deepEqual(await new ClusterConfigurationSans(p).certSans(), ['*', '', '10.0.0.1']);
  });
  it('fails for a missing file (the issuer then logs and continues)', async () => {
    await assert.rejects(new ClusterConfigurationSans(join(dir, 'missing')).certSans());
  });
});
