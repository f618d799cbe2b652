import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ipAddressBytes, KubeletCertificateAuthority, KubeletCertificateError } from './kubelet-certificate.js';

const dir = mkdtempSync(join(tmpdir(), 'kubelet-certificate-'));

/** A CA made by openssl (not by our code). */
function opensslCa(name: string, keyArgs: string[]): { certPem: string; keyPem: string } {
  const key = join(dir, `${name}.key`);
  execFileSync('openssl', [...keyArgs, '-out', key]);
  execFileSync('openssl', ['req', '-x509', '-new', '-key', key, '-subj', `/O=test/CN=${name}`, '-days', '30', '-out', `${key}.crt`]);
  return { certPem: readFileSync(`${key}.crt`, 'utf8'), keyPem: readFileSync(key, 'utf8') };
}

describe('KubeletCertificateAuthority (certificate written as DER)', () => {
  const cas: Array<[string, string[]]> = [
    ['EC P-256 CA (SEC1)', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout']],
    ['EC P-384 CA (SEC1)', ['ecparam', '-name', 'secp384r1', '-genkey', '-noout']],
    ['RSA CA (PKCS#8)', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048']],
  ];
  const subjects: Array<[string, () => ReturnType<typeof generateKeyPairSync>['publicKey']]> = [
    ['EC kubelet key', () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey],
    ['RSA kubelet key', () => generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey],
    ['Ed25519 kubelet key', () => generateKeyPairSync('ed25519').publicKey],
  ];
  for (const [caName, keyArgs] of cas) {
    const ca = opensslCa(caName.replace(/\W/g, ''), keyArgs);
    for (const [subjectName, makeKey] of subjects) {
      it(`${caName} signs for an ${subjectName}: node:crypto parses and verifies it`, async () => {
        const now = new Date(Math.floor(Date.now() / 1000) * 1000);
        const authority = await KubeletCertificateAuthority.fromPem(ca.certPem, ca.keyPem, () => now);
        const publicKey = makeKey();
        const pem = (await authority.issue({ subjectDer: KubeletCertificateAuthority.nodeSubjectDer('worker-7'), publicKey, ips: ['10.0.0.9', 'fd00::9'] })).toString();
        const cert = new X509Certificate(pem);
        const caCert = new X509Certificate(ca.certPem);
        assert.ok(cert.verify(caCert.publicKey), 'signed by the CA');
        assert.equal(cert.issuer, caCert.subject);
        assert.equal(cert.subject, 'O=system:nodes\nCN=system:node:worker-7');
        assert.equal(cert.subjectAltName, 'IP Address:10.0.0.9, IP Address:FD00:0:0:0:0:0:0:9');
        assert.equal(cert.ca, false);
        assert.ok(cert.publicKey.equals(publicKey));
        assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.2', '1.3.6.1.5.5.7.3.1']);
        assert.equal(new Date(cert.validFrom).getTime(), now.getTime() - 2 * 3600_000);
        assert.ok(pem.endsWith('-----END CERTIFICATE-----\n'));
      });
    }
  }

  it('refuses what it cannot sign with or for', async () => {
    const ca = opensslCa('ok', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout']);
    const authority = await KubeletCertificateAuthority.fromPem(ca.certPem, ca.keyPem);
    const x25519 = generateKeyPairSync('x25519').publicKey;
    await assert.rejects(authority.issue({ subjectDer: KubeletCertificateAuthority.nodeSubjectDer('n'), publicKey: x25519, ips: [] }), (e: unknown) => e instanceof KubeletCertificateError && e.code === 'KEY_UNSUPPORTED');
    const p521 = opensslCa('p521', ['ecparam', '-name', 'secp521r1', '-genkey', '-noout']);
    await assert.rejects(KubeletCertificateAuthority.fromPem(p521.certPem, p521.keyPem), /unsupported CA curve/);
    await assert.rejects(KubeletCertificateAuthority.fromPem('no pem', ca.keyPem), /holds no PEM certificate/);
  });

  const ipCases: Array<[string, string]> = [
    ['10.1.2.3', '0a010203'],
    ['::1', '00000000000000000000000000000001'],
    ['2001:db8::7', '20010db8000000000000000000000007'],
    ['::ffff:192.0.2.9', '00000000000000000000ffffc0000209'],
    ['fe80::1:2', 'fe800000000000000000000000010002'],
  ];
  for (const [ip, hex] of ipCases) it(`ipAddressBytes(${ip})`, () => assert.equal(ipAddressBytes(ip).toString('hex'), hex));
});
