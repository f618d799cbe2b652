import assert from 'node:assert/strict';
import { createHash, X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AsnConvert as AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { Certificate, Extension } from '@peculiar/asn1-x509';
import { DummyIssuer } from '@asterism/attestation';
import { CryptoError } from '@asterism/crypto';
import { isAsterismError } from '@asterism/errors';
import { createAtlsCertificate, encodeOid } from './certificate.js';
import { decodeOid, parseCertificateFields, parseExtension } from './der.js';
import { encodeEvidenceExtension } from './evidence.js';
import { AtlsError } from './errors.js';

describe('DER reader', () => {
  it('agrees with @peculiar/asn1-x509 and node:crypto on aTLS certificates', async () => {
    for (let i = 0; i < 20; i++) {
      const { der } = await createAtlsCertificate({ nonce: createHash('sha256').update(String(i)).digest(), issuer: new DummyIssuer() });
      const f = parseCertificateFields(der);
      const ref = AsnConvert.parse(der, Certificate);
      const x = new X509Certificate(der);
      assert.equal(f.signatureAlgorithm, ref.signatureAlgorithm.algorithm);
      assert.deepEqual(f.signature, Buffer.from(ref.signatureValue));
      assert.deepEqual(f.spkiRaw, x.publicKey.export({ type: 'spki', format: 'der' }));
      assert.equal(f.notBefore.getTime(), new Date(x.validFrom).getTime());
      assert.equal(f.notAfter.getTime(), new Date(x.validTo).getTime());
      assert.deepEqual(
        f.extensions.map((e) => [e.oid, e.critical, e.value.toString('hex')]),
        [...(ref.tbsCertificate.extensions ?? [])].map((e) => [e.extnID, e.critical, Buffer.from(e.extnValue.buffer).toString('hex')]),
      );
      assert.deepEqual(f.tbsRaw, Buffer.from(AsnConvert.serialize(ref.tbsCertificate)));
    }
  });

  it('reads exporter evidence (one Extension) as @peculiar/asn1-x509 does, and writes the same bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 70_000 }), fc.constantFrom('1.3.9900.1', '1.3.9900.5.1', '1.3.9900.3.2'), fc.boolean(), (doc, oid, critical) => {
        const der = Buffer.from(AsnConvert.serialize(new Extension({ extnID: oid, critical, extnValue: new OctetString(doc) })));
        const ext = parseExtension(der);
        assert.deepEqual([ext.oid, ext.critical, ext.value], [oid, critical, Buffer.from(doc)]);
        if (!critical) assert.deepEqual(encodeEvidenceExtension(oid, Buffer.from(doc)), der);
      }),
      { numRuns: 50 },
    );
    const der = encodeEvidenceExtension('1.3.9900.1', Buffer.from('doc'));
    for (const bad of [Buffer.concat([der, Buffer.from([0])]), der.subarray(0, der.length - 1), Buffer.from('3000', 'hex'), Buffer.alloc(0)]) {
      assert.throws(() => parseExtension(bad), (err: unknown) => isAsterismError(err, 'CERT_MALFORMED', 'DER_MALFORMED'));
    }
  });

  it('round-trips OIDs', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 39 }), fc.array(fc.integer({ min: 0, max: 2 ** 40 }), { maxLength: 8 }), (a, b, rest) => {
        const oid = [a, b, ...rest].join('.');
        assert.equal(decodeOid(encodeOid(oid)), oid);
      }),
    );
  });

  it('rejects mutated certificates with the typed CERT_MALFORMED / DER_MALFORMED, never another exception', async () => {
    const { der } = await createAtlsCertificate({ nonce: Buffer.alloc(32), issuer: new DummyIssuer() });
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(der.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }), fc.nat(der.length), (flips, cut) => {
        const m = Buffer.from(der.subarray(0, Math.max(1, cut)));
        for (const [i, v] of flips) if (i < m.length) m[i] = v;
        try {
          parseCertificateFields(m);
        } catch (err) {
          if (!(isAsterismError(err, 'CERT_MALFORMED', 'DER_MALFORMED') && (err instanceof AtlsError || err instanceof CryptoError))) {
            assert.fail(`foreign exception ${String(err)} for ${m.toString('hex')}`);
          }
        }
      }),
      { numRuns: 2000 },
    );
  });
});
