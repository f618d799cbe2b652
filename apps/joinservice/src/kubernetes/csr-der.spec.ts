import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CertificationRequest } from '@peculiar/asn1-csr';
import { AsnConvert } from '@peculiar/asn1-schema';
import { parseCsrDer } from './csr-der.js';

const dir = mkdtempSync(join(tmpdir(), 'csr-der-'));

/** A CSR made by openssl (not by our code). */
function opensslCsr(name: string, subj: string, ext?: string): Buffer {
  const key = join(dir, `${name}.key`);
  execFileSync('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key]);
  execFileSync('openssl', ['req', '-new', '-key', key, '-subj', subj, '-outform', 'DER', '-out', `${key}.csr`, ...(ext ? ['-addext', ext] : [])]);
  return readFileSync(`${key}.csr`);
}

describe('parseCsrDer', () => {
  // Cross-checked against the generic @peculiar/asn1-csr parser.
  const cases: Array<[string, Buffer, string[]]> = [
    ['no extensions', opensslCsr('plain', '/O=system:nodes/CN=system:node:a'), []],
    ['IPv4 + DNS SANs', opensslCsr('v4', '/O=system:nodes/CN=system:node:b', 'subjectAltName=IP:10.0.0.5,DNS:x.example,IP:192.0.2.1'), ['10.0.0.5', '192.0.2.1']],
    ['IPv6 SAN', opensslCsr('v6', '/O=system:nodes/CN=system:node:c', 'subjectAltName=IP:2001:db8::7'), ['2001:db8:0:0:0:0:0:7']],
    ['UTF-8 subject', opensslCsr('utf8', '/O=system:nodes/CN=system:node:d/OU=n\u00e4me'), []],
  ];
  for (const [name, der, ips] of cases) {
    it(`reads ${name} like the generic parser`, () => {
      const f = parseCsrDer(der);
      const ref = AsnConvert.parse(der, CertificationRequest);
      assert.deepEqual(f.infoRaw, Buffer.from(AsnConvert.serialize(ref.certificationRequestInfo)));
      assert.deepEqual(f.subjectRaw, Buffer.from(AsnConvert.serialize(ref.certificationRequestInfo.subject)));
      assert.deepEqual(f.spkiRaw, Buffer.from(AsnConvert.serialize(ref.certificationRequestInfo.subjectPKInfo)));
      assert.equal(f.signatureAlgorithm, ref.signatureAlgorithm.algorithm);
      assert.deepEqual(f.signature, Buffer.from(ref.signature));
      const refSubject = [...ref.certificationRequestInfo.subject].flatMap((rdn) => [...rdn].map((a) => ({ oid: a.type, value: a.value.toString() })));
      assert.deepEqual(f.subject, refSubject);
      assert.deepEqual(f.ips, ips);
    });
  }

  it('refuses malformed input', () => {
    const good = cases[1]![1];
    const bad: Array<[string, Buffer, RegExp]> = [
      ['empty', Buffer.alloc(0), /truncated/],
      ['truncated', good.subarray(0, good.length - 10), /overruns|truncated/],
      ['trailing data', Buffer.concat([good, Buffer.from([0])]), /trailing data/],
      ['not a sequence', Buffer.from('0403010203', 'hex'), /expected DER tag 0x30/],
    ];
    for (const [name, der, reason] of bad) assert.throws(() => parseCsrDer(der), reason, name);
  });
});
