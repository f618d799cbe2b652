import assert from 'node:assert/strict';
import { createHash, X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate } from '@peculiar/asn1-x509';
import { DummyIssuer, parseGoJsonObject } from '@asterism/attestation';
import { ATLS_CERT_VALIDITY_SLACK_MS, createAtlsCertificate, createNonceCaCertificate, generateAtlsKey } from './certificate.js';

const NONCE = Buffer.from('fbefbeff'.repeat(8), 'hex'); // base64 has '+' and '/'

describe('aTLS certificate (docs/protocol/atls.md)', () => {
  it('is self-signed P-256/SHA-256, CN=Constellation, valid now ± 2 h, with the document over (nonce, sha256(SPKI))', async () => {
    const now = new Date('2026-01-02T03:04:05.678Z');
    const cert = await createAtlsCertificate({ nonce: NONCE, issuer: new DummyIssuer(), now });
    const x = new X509Certificate(cert.der);
    assert.equal(x.subject, 'CN=Constellation');
    assert.equal(x.issuer, 'CN=Constellation');
    assert.ok(x.verify(x.publicKey), 'self-signature');
    assert.equal(x.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.equal(new Date(x.validFrom).getTime(), Math.floor((now.getTime() - ATLS_CERT_VALIDITY_SLACK_MS) / 1000) * 1000);
    assert.equal(new Date(x.validTo).getTime(), Math.floor((now.getTime() + ATLS_CERT_VALIDITY_SLACK_MS) / 1000) * 1000);
    const tbs = AsnConvert.parse(cert.der, Certificate).tbsCertificate;
    assert.equal(tbs.signature.algorithm, '1.2.840.10045.4.3.2');
    assert.equal(tbs.signature.parameters, undefined);
    assert.equal(tbs.extensions?.length, 1);
    const ext = tbs.extensions![0]!;
    assert.equal(ext.extnID, '1.3.9900.1.1');
    assert.equal(ext.critical, false);
    const doc = parseGoJsonObject(Buffer.from(ext.extnValue.buffer), 'doc');
    const spki = x.publicKey.export({ type: 'spki', format: 'der' });
    assert.equal(doc.Nonce, NONCE.toString('base64'));
    assert.equal(doc.UserData, createHash('sha256').update(spki).digest('base64'));
    assert.deepEqual(cert.key.userData, createHash('sha256').update(spki).digest());
  });

  it('has no extensions at all without an issuer', async () => {
    const cert = await createAtlsCertificate({ nonce: NONCE });
    assert.equal(AsnConvert.parse(cert.der, Certificate).tbsCertificate.extensions, undefined);
  });

  it('encodes random serials as positive minimal DER integers of at most 128 bits', async () => {
    const key = generateAtlsKey();
    const serials = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const raw = Buffer.from(AsnConvert.parse((await createAtlsCertificate({ nonce: NONCE, key })).der, Certificate).tbsCertificate.serialNumber);
      assert.ok(raw[0]! < 0x80, 'positive');
      assert.ok(!(raw[0] === 0 && raw.length > 1 && raw[1]! < 0x80), 'minimal');
      assert.ok(raw.length <= 17);
      serials.add(raw.toString('hex'));
    }
    assert.equal(serials.size, 300);
  });

  it('nonce CA: Subject is exactly SEQUENCE{SET{SEQUENCE{2.5.4.3, PrintableString b64(nonce)}}}', () => {
    const pem = createNonceCaCertificate(NONCE, generateAtlsKey());
    const x = new X509Certificate(pem);
    const b64 = NONCE.toString('base64');
    const cn = Buffer.from(b64);
    const expected = Buffer.concat([Buffer.from([0x30, 5 + 4 + cn.length + 2, 0x31, 3 + 4 + cn.length + 2, 0x30, 3 + 2 + cn.length + 2, 0x06, 0x03, 0x55, 0x04, 0x03, 0x13, cn.length]), cn]);
    const tbs = AsnConvert.parse(x.raw, Certificate).tbsCertificate;
    assert.deepEqual(Buffer.from(AsnConvert.serialize(tbs.subject)), expected);
    assert.equal(tbs.subject[0]![0]!.value.printableString, b64);
  });
});

describe('generateAtlsKey', () => {
  it('builds the same SPKI DER as node:crypto (and Go MarshalPKIXPublicKey) and a usable SEC1 key', async () => {
    const { createPrivateKey, createPublicKey } = await import('node:crypto');
    for (let i = 0; i < 50; i++) {
      const k = generateAtlsKey();
      const fromPem = createPrivateKey(k.privateKeyPem);
      assert.deepEqual(createPublicKey(fromPem).export({ type: 'spki', format: 'der' }), k.spkiDer);
      assert.equal(k.spkiDer.length, 91);
    }
  });
});
