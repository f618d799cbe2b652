import assert from 'node:assert/strict';
import { createHash, X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate } from '@peculiar/asn1-x509';
import { DummyIssuer } from '@asterism/attestation';
import { CryptoError } from '@asterism/crypto';
import { isAsterismError } from '@asterism/errors';
import { createAtlsCertificate, encodeOid } from './certificate.js';
import { decodeOid, parseCertificateFields } from './der.js';
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
