import 'reflect-metadata';
import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';
import { describe, it } from 'node:test';
import * as x509 from '@peculiar/x509';
import { DummyIssuer, DummyValidator } from '@asterism/attestation';
import { AtlsError } from './errors.js';
import { createAtlsCertificate } from './certificate.js';
import { dummyValidatorAs, hangingValidator } from './services.fixture.js';
import { parseAtlsCertificate, validateWithTimeout, verifyAtlsCertificate } from './verify.js';

x509.cryptoProvider.set(webcrypto as never);
const NONCE = Buffer.alloc(32, 9);
const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A certificate from another library (@peculiar/x509) with arbitrary extensions and a dummy document. */
async function foreignCert(extra: (userData: Buffer) => Promise<x509.Extension[]>, nonce = NONCE): Promise<Buffer> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const spki = Buffer.from(await webcrypto.subtle.exportKey('spki', keys.publicKey));
  const userData = Buffer.from(await webcrypto.subtle.digest('SHA-256', spki));
  void nonce;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: [{ '2.5.4.3': ['Constellation'] }],
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 60_000),
    keys: keys as never,
    signingAlgorithm: ALG,
    extensions: await extra(userData),
  });
  return Buffer.from(cert.rawData);
}
const dummyExt = async (oid: string, userData: Buffer, nonce = NONCE) => new x509.Extension(oid, false, await new DummyIssuer().issue(userData, nonce));

async function code(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    assert.ok(err instanceof AtlsError, String(err));
    return err.code;
  }
  return 'OK';
}

describe('aTLS verification (docs/protocol/atls.md)', () => {
  const cases: Array<{ name: string; cert: () => Promise<Buffer | undefined>; validators?: string[]; want: string }> = [
    { name: 'our own certificate', cert: async () => (await createAtlsCertificate({ nonce: NONCE, issuer: new DummyIssuer() })).der, want: 'OK' },
    { name: 'a certificate from another library', cert: () => foreignCert(async (u) => [await dummyExt('1.3.9900.1.1', u)]), want: 'OK' },
    { name: 'any matching validator', cert: () => foreignCert(async (u) => [await dummyExt('1.3.9900.5.1', u)]), validators: ['dummy', 'qemu-vtpm'], want: 'OK' },
    { name: 'no certificate', cert: async () => undefined, want: 'NO_CERTIFICATE' },
    { name: 'garbage', cert: async () => Buffer.from('3003020101', 'hex'), want: 'CERT_MALFORMED' },
    {
      name: 'an unhandled critical extension',
      cert: () => foreignCert(async (u) => [await dummyExt('1.3.9900.1.1', u), new x509.Extension('1.2.3.4', true, new Uint8Array([5, 0]))]),
      want: 'CERT_UNHANDLED_CRITICAL_EXTENSION',
    },
    {
      name: 'EKU without server auth',
      cert: () => foreignCert(async (u) => [await dummyExt('1.3.9900.1.1', u), new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth])]),
      want: 'CERT_EKU_INCOMPATIBLE',
    },
    {
      name: 'EKU with server auth',
      cert: () => foreignCert(async (u) => [await dummyExt('1.3.9900.1.1', u), new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], true)]),
      want: 'OK',
    },
    {
      name: 'only the first compatible extension counts',
      cert: () => foreignCert(async (u) => [await dummyExt('1.3.9900.5.1', u, Buffer.alloc(32, 1)), await dummyExt('1.3.9900.1.1', u)]),
      validators: ['dummy', 'qemu-vtpm'],
      want: 'ATTESTATION_INVALID',
    },
    { name: 'document over another key', cert: () => foreignCert(async () => [await dummyExt('1.3.9900.1.1', Buffer.alloc(32))]), want: 'USER_DATA_MISMATCH' },
    { name: 'no compatible document', cert: () => foreignCert(async (u) => [await dummyExt('1.3.9900.4.1', u)]), want: 'NO_COMPATIBLE_DOCUMENT' },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const validators = (c.validators ?? ['dummy']).map((v) => (v === 'dummy' ? new DummyValidator() : dummyValidatorAs(v)));
      assert.equal(await code(verifyAtlsCertificate(await c.cert(), validators, NONCE)), c.want);
    });
  }

  it('names every extension OID it found when none is compatible', async () => {
    const der = await foreignCert(async (u) => [await dummyExt('1.3.9900.4.1', u), new x509.BasicConstraintsExtension(false)]);
    await assert.rejects(verifyAtlsCertificate(der, [new DummyValidator()], NONCE), {
      message: 'certificate does not contain compatible attestation documents: got extension OIDs []string{"1.3.9900.4.1", "2.5.29.19"}',
    });
  });

  it('checks validity against the given time', async () => {
    const der = (await createAtlsCertificate({ nonce: NONCE, issuer: new DummyIssuer() })).der;
    assert.equal(await code(() => parseAtlsCertificate(der, new Date(Date.now() + 3 * 3600_000))), 'CERT_EXPIRED');
    assert.equal(await code(() => parseAtlsCertificate(der, new Date(Date.now() - 3 * 3600_000))), 'CERT_NOT_YET_VALID');
  });

  it('aborts a validator after the timeout (30 s by default)', async () => {
    const t0 = Date.now();
    await assert.rejects(validateWithTimeout(hangingValidator(), Buffer.alloc(0), NONCE, { timeoutMs: 100 }), (e: AtlsError) => e.code === 'VALIDATION_TIMEOUT');
    assert.ok(Date.now() - t0 < 2000);
  });
});
