import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { KubeletCa, KubeletCaError, parseKubeletCsr } from './kubelet-ca.js';

const dir = mkdtempSync(join(tmpdir(), 'kubelet-ca-'));
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }).toString();

/** A CSR made by the real openssl (not by our code). */
function opensslCsr(name: string, subj: string, opts: { key?: 'ec' | 'rsa'; ip?: string } = {}): Buffer {
  const key = `${name}.key`;
  if (opts.key === 'rsa') openssl('genrsa', '-out', key, '2048');
  else openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key);
  openssl('req', '-new', '-key', key, '-subj', subj, '-outform', 'DER', '-out', `${name}.csr`, ...(opts.ip ? ['-addext', `subjectAltName=IP:${opts.ip},DNS:ignored.example`] : []));
  return readFileSync(join(dir, `${name}.csr`));
}

function opensslCa(kind: 'ec' | 'rsa'): { certPem: string; keyPem: string } {
  if (kind === 'ec') openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `ca-${kind}.key`); // SEC1 "EC PRIVATE KEY"
  else openssl('genrsa', '-traditional', '-out', `ca-${kind}.key`, '2048'); // PKCS#1 "RSA PRIVATE KEY"
  openssl('req', '-x509', '-new', '-key', `ca-${kind}.key`, '-subj', '/CN=kubernetes', '-days', '30', '-out', `ca-${kind}.crt`);
  return { certPem: readFileSync(join(dir, `ca-${kind}.crt`), 'utf8'), keyPem: readFileSync(join(dir, `ca-${kind}.key`), 'utf8') };
}

describe('KubeletCa (docs/protocol/join-ticket.md)', () => {
  for (const caKind of ['ec', 'rsa'] as const) {
    it(`signs an openssl CSR with a ${caKind} CA: verifies with openssl, reference usages, lifetime, IP SANs only`, async () => {
      const ca = opensslCa(caKind);
      const now = new Date(Math.floor(Date.now() / 1000) * 1000);
      const kca = await KubeletCa.fromPem(ca.certPem, ca.keyPem, () => now);
      const csr = parseKubeletCsr(opensslCsr(`w-${caKind}`, '/O=system:nodes/CN=system:node:worker-1', { ip: '10.0.0.5' }));
      assert.equal(csr.nodeName, 'worker-1');
      const pem = (await kca.sign(csr)).toString();
      writeFileSync(join(dir, `w-${caKind}.crt`), pem);
      assert.match(openssl('verify', '-CAfile', `ca-${caKind}.crt`, `w-${caKind}.crt`), /OK/);
      const text = openssl('x509', '-in', `w-${caKind}.crt`, '-noout', '-text');
      assert.match(text, /Subject: O ?= ?system:nodes, CN ?= ?system:node:worker-1/);
      assert.match(text, /Digital Signature, Key Encipherment/);
      assert.match(text, /TLS Web Client Authentication, TLS Web Server Authentication/);
      assert.match(text, /CA:FALSE/);
      assert.match(text, /IP Address:10\.0\.0\.5/);
      assert.doesNotMatch(text, /DNS:/);
      const cert = new X509Certificate(pem);
      assert.equal(new Date(cert.validFrom).getTime(), now.getTime() - 2 * 3600_000);
      assert.equal(new Date(cert.validTo).getTime(), now.getTime() + 365 * 24 * 3600_000);
      assert.ok(BigInt(`0x${cert.serialNumber}`) < 2n ** 128n);
    });
  }

  // The certificate is written as DER by hand: openssl must read every SAN form back as it was asked for.
  const sanCases: Array<[string, string, RegExp]> = [
    ['IPv4', '192.0.2.1', /IP Address:192\.0\.2\.1(,|\n)/],
    ['IPv6 with ::', '2001:db8::7', /IP Address:2001:DB8:0:0:0:0:0:7/i],
    ['IPv6 loopback', '::1', /IP Address:0:0:0:0:0:0:0:1/],
    ['IPv4-mapped IPv6', '::ffff:192.0.2.9', /IP Address:0:0:0:0:0:FFFF:C000:209/i],
  ];
  for (const [name, ip, expected] of sanCases) {
    it(`writes an ${name} SAN that openssl reads back (${ip})`, async () => {
      const ca = opensslCa('ec');
      const kca = await KubeletCa.fromPem(ca.certPem, ca.keyPem);
      const file = `san-${name.replace(/\W/g, '')}`;
      writeFileSync(join(dir, `${file}.crt`), await kca.sign(parseKubeletCsr(opensslCsr(file, '/O=system:nodes/CN=system:node:n', { ip }))));
      assert.match(openssl('verify', '-CAfile', 'ca-ec.crt', `${file}.crt`), /OK/);
      assert.match(openssl('x509', '-in', `${file}.crt`, '-noout', '-ext', 'subjectAltName'), expected);
    });
  }

  it('accepts RSA CSRs and rejects every malformed or wrong CSR with a reason', async () => {
    assert.equal(parseKubeletCsr(opensslCsr('rsa', '/O=system:nodes/CN=system:node:n1', { key: 'rsa' })).nodeName, 'n1');
    const cases: Array<[string, Buffer, RegExp]> = [
      ['wrong organization', opensslCsr('o', '/O=system:masters/CN=system:node:x'), /organization must be exactly/],
      ['two organizations', opensslCsr('oo', '/O=system:nodes/O=system:masters/CN=system:node:x'), /organization must be exactly/],
      ['missing prefix', opensslCsr('cn', '/O=system:nodes/CN=worker-1'), /common name must be/],
      ['empty name', opensslCsr('empty', '/O=system:nodes/CN=system:node:'), /common name must be/],
      ['garbage', Buffer.from('not a csr'), /not a DER PKCS#10/],
    ];
    const good = opensslCsr('good', '/O=system:nodes/CN=system:node:worker-9');
    const tampered = Buffer.from(good);
    const at = tampered.indexOf(Buffer.from('worker-9'));
    tampered[at] = 'W'.charCodeAt(0);
    cases.push(['tampered subject', tampered, /signature does not verify/]);
    for (const [what, csr, reason] of cases) {
      assert.throws(() => parseKubeletCsr(csr), (e: unknown) => e instanceof KubeletCaError && e.code === 'CSR_INVALID' && reason.test(e.message), what);
    }
  });

  it('refuses CA keys of unknown PEM types with the reference message', async () => {
    const ca = opensslCa('ec');
    await assert.rejects(KubeletCa.fromPem(ca.certPem, '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n'), /unsupported key type "OPENSSH PRIVATE KEY"/);
  });
});
