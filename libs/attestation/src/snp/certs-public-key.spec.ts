import assert from 'node:assert/strict';
import { createPublicKey, X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate } from '@peculiar/asn1-x509';
import { AttestationError } from '../errors.js';
import { NOP_ATTESTATION_LOGGER } from '../interfaces.js';
import { SignatureMemo } from './chain.js';
import { parseAmdCertificate, parseSignerCertificate, pemCertificates } from './certs.js';
import { SnpCollateral } from './collateral.js';
import { goldenSnp, VLEK_VECTOR_TIME } from './golden-vectors.fixture.js';
import { SnpVerifier } from './verifier.js';

const golden = goldenSnp();

/**
 * A real certificate with one bit of its public key's Y coordinate flipped: the DER stays well-formed
 * (OpenSSL builds the X509Certificate) but the point is no longer on P-384, which OpenSSL only
 * notices when the key is decoded.
 */
function offCurve(real: Buffer): Buffer {
  const der = Buffer.from(real);
  const point = Buffer.from(AsnConvert.parse(der, Certificate).tbsCertificate.subjectPublicKeyInfo.subjectPublicKey);
  assert.equal(point.length, 97, 'uncompressed P-384 point');
  const at = der.indexOf(point);
  assert.ok(at > 0 && der.indexOf(point, at + 1) === -1, 'the point occurs once in the DER');
  der[at + 96]! ^= 0x01; // last byte of Y
  return der;
}

const certInvalid = (what: string) => (e: unknown) => e instanceof AttestationError && e.code === 'CERT_INVALID' && e.message.startsWith(`${what}: malformed certificate`);
const pem = (der: Buffer) => `-----BEGIN CERTIFICATE-----\n${der.toString('base64')}\n-----END CERTIFICATE-----\n`;

describe('SNP certificates: a public key off its curve', () => {
  const bad = offCurve(golden.vcekDer);
  const badVlek = offCurve(pemCertificates(golden.vlekPem, 'VLEK')[0]!);

  it('is a certificate OpenSSL accepts but whose key it cannot decode (the precondition)', () => {
    const x = new X509Certificate(bad);
    assert.match(x.subject, /CN=SEV-VCEK/);
    assert.throws(() => x.publicKey, (e: unknown) => !(e instanceof AttestationError));
    const spki = AsnConvert.serialize(AsnConvert.parse(bad, Certificate).tbsCertificate.subjectPublicKeyInfo);
    assert.throws(() => createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' }));
  });

  it('parseAmdCertificate and parseSignerCertificate (DER and PEM) refuse it with CERT_INVALID', () => {
    assert.throws(() => parseAmdCertificate(bad, 'VCEK'), certInvalid('VCEK'));
    assert.throws(() => parseSignerCertificate(bad, 'vcek'), certInvalid('VCEK'));
    assert.throws(() => parseSignerCertificate(pem(bad), 'vcek'), certInvalid('VCEK'));
    assert.throws(() => parseSignerCertificate(pem(badVlek), 'vlek'), certInvalid('VLEK'));
    // the untouched vector still parses, with its key
    assert.equal(parseSignerCertificate(golden.vcekDer, 'vcek').publicKey.asymmetricKeyDetails?.namedCurve, 'secp384r1');
  });

  // A VLEK must come with the evidence (no fallback to KDS), so the peer's certificate decides.
  it('a peer sending an off-curve VLEK as ReportSigner with the real VLEK report gets CERT_INVALID from the verifier', async () => {
    const ark = parseAmdCertificate(pemCertificates(golden.arkPem, 'ARK')[0]!, 'ARK');
    const memo = new SignatureMemo();
    const now = () => VLEK_VECTOR_TIME;
    const tcb = { bootloader: 0, tee: 0, snp: 0, microcode: 0 };
    const verifier = new SnpVerifier({
      ark,
      memo,
      now,
      logger: NOP_ATTESTATION_LOGGER,
      policy: { vmpl: 0, minimumTcb: tcb, minimumLaunchTcb: tcb, permitProvisionalFirmware: true },
      collateral: new SnpCollateral({ offline: true }).views(ark, memo, now),
    });
    const evidence = { report: golden.vlekReport, reportSigner: Buffer.from(pem(badVlek)), certChain: Buffer.from(golden.vlekChainPem) };
    await assert.rejects(verifier.verify(evidence, () => undefined), certInvalid('VLEK'));
  });
});
