/**
 * Test PKI for azure-trustedlaunch: a root, an issuing CA and AK certificates made with
 * @peculiar/x509 over WebCrypto (ECDSA P-256 CAs; the AK certificate carries the TPM's RSA key
 * and a "CA Issuers" URL), with validity windows chosen by each test.
 */
import 'reflect-metadata';
import { X509Certificate as NodeCert, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as never);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A certificate with its key pair. */
export interface Issued {
  readonly cert: x509.X509Certificate;
  readonly keys: webcrypto.CryptoKeyPair;
  /** node:crypto view of the certificate. */
  readonly node: NodeCert;
  readonly der: Buffer;
}

/** Validity window; defaults to one year around now. */
export interface Window {
  readonly notBefore?: Date;
  readonly notAfter?: Date;
}

const YEAR = 365 * 24 * 3600_000;
const window = (w: Window) => ({ notBefore: w.notBefore ?? new Date(Date.now() - YEAR), notAfter: w.notAfter ?? new Date(Date.now() + YEAR) });
const serial = () => Buffer.from(webcrypto.getRandomValues(new Uint8Array(8))).toString('hex').replace(/^./, '1');
const view = (cert: x509.X509Certificate, keys: webcrypto.CryptoKeyPair): Issued => ({ cert, keys, node: new NodeCert(Buffer.from(cert.rawData)), der: Buffer.from(cert.rawData) });

/** A self-signed root CA. */
export async function makeRoot(name: string, w: Window = {}): Promise<Issued> {
  const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${name}`,
    ...window(w),
    keys,
    signingAlgorithm: ALG,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
  });
  return view(cert, keys);
}

/** An intermediate CA issued by `issuer`; `caIssuersUrl` points at the issuer's certificate. */
export async function makeCa(name: string, issuer: Issued, caIssuersUrl?: string, w: Window = {}): Promise<Issued> {
  const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${name}`,
    issuer: issuer.cert.subject,
    ...window(w),
    publicKey: keys.publicKey,
    signingKey: issuer.keys.privateKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
      ...(caIssuersUrl ? [new x509.AuthorityInfoAccessExtension({ caIssuers: caIssuersUrl })] : []),
    ],
  });
  return view(cert, keys);
}

/** An AK certificate for an RSA public key (SPKI DER), issued by `issuer`, naming `caIssuersUrls`. */
export async function makeAkCert(akSpki: Buffer, issuer: Issued, caIssuersUrls: string[], w: Window = {}): Promise<NodeCert> {
  const publicKey = await webcrypto.subtle.importKey('spki', akSpki, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, true, ['verify']);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: 'CN=00000000-0000-0000-0000-000000000000.TrustedVM.test',
    issuer: issuer.cert.subject,
    ...window(w),
    publicKey,
    signingKey: issuer.keys.privateKey,
    signingAlgorithm: ALG,
    extensions: [new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true), ...(caIssuersUrls.length ? [new x509.AuthorityInfoAccessExtension({ caIssuers: caIssuersUrls })] : [])],
  });
  return new NodeCert(Buffer.from(cert.rawData));
}
