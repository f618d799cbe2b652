import 'reflect-metadata';
import { createPrivateKey, randomBytes, webcrypto, type KeyObject } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { AsterismError } from '@asterism/errors';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const DAY = 24 * 3600 * 1000;

/** The CA files or a subject key cannot be used. */
export class KubeletCertificateError extends AsterismError<'CA_INVALID' | 'KEY_UNSUPPORTED'> {}

/** What a kubelet certificate is issued for: the node name and the key and IPs of its CSR. */
export interface KubeletCertificateSubject {
  /** DER of the subject Name (`O=system:nodes, CN=system:node:<name>`), copied verbatim. */
  subjectDer: ArrayBuffer;
  publicKey: KeyObject;
  ips: string[];
}

function importParams(key: KeyObject): webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams | webcrypto.Algorithm {
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    return { name: 'ECDSA', namedCurve: curve === 'secp384r1' ? 'P-384' : curve === 'secp521r1' ? 'P-521' : 'P-256' };
  }
  if (key.asymmetricKeyType === 'rsa') return { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  if (key.asymmetricKeyType === 'ed25519') return { name: 'Ed25519' };
  throw new KubeletCertificateError('KEY_UNSUPPORTED', `unsupported kubelet key type ${key.asymmetricKeyType}`);
}

/**
 * The cluster CA issuing kubelet certificates (docs/protocol: kubelet certificates): client and
 * server auth, 1 year, valid from 2 hours ago (clock skew), CA:false, the CSR's IP SANs. One home
 * for the template, used by the joinservice for joining nodes and by the first control plane for
 * its own kubelet. RSA (kubeadm's default) and ECDSA CAs.
 */
export class KubeletCertificateAuthority {
  private constructor(
    private readonly caCert: x509.X509Certificate,
    private readonly signingKey: webcrypto.CryptoKey,
    private readonly signingAlgorithm: webcrypto.Algorithm | webcrypto.EcdsaParams,
    private readonly now: () => Date,
  ) {}

  /** From `ca.crt` (first PEM block) and `ca.key` (SEC1, PKCS#1 or PKCS#8). */
  static async fromPem(certPem: string, keyPem: string, now: () => Date = () => new Date()): Promise<KubeletCertificateAuthority> {
    const block = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/.exec(certPem)?.[0];
    if (!block) throw new KubeletCertificateError('CA_INVALID', 'ca.crt holds no PEM certificate');
    const keyType = /-----BEGIN ([A-Z ]+)-----/.exec(keyPem)?.[1] ?? '';
    if (!['EC PRIVATE KEY', 'RSA PRIVATE KEY', 'PRIVATE KEY'].includes(keyType)) throw new KubeletCertificateError('CA_INVALID', `unsupported key type "${keyType}"`);
    const key = createPrivateKey(keyPem);
    const pkcs8 = key.export({ type: 'pkcs8', format: 'der' });
    let algorithm: webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams;
    let signingAlgorithm: webcrypto.Algorithm | webcrypto.EcdsaParams;
    if (key.asymmetricKeyType === 'ec') {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      const named = curve === 'prime256v1' ? 'P-256' : curve === 'secp384r1' ? 'P-384' : undefined;
      if (!named) throw new KubeletCertificateError('CA_INVALID', `unsupported CA curve ${curve}`);
      algorithm = { name: 'ECDSA', namedCurve: named };
      signingAlgorithm = { name: 'ECDSA', hash: named === 'P-256' ? 'SHA-256' : 'SHA-384' } as webcrypto.EcdsaParams;
    } else if (key.asymmetricKeyType === 'rsa') {
      algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
      signingAlgorithm = { name: 'RSASSA-PKCS1-v1_5' };
    } else {
      throw new KubeletCertificateError('CA_INVALID', `unsupported CA key algorithm ${key.asymmetricKeyType}`);
    }
    const signingKey = await webcrypto.subtle.importKey('pkcs8', pkcs8, algorithm, false, ['sign']);
    return new KubeletCertificateAuthority(new x509.X509Certificate(block), signingKey, signingAlgorithm, now);
  }

  /** Issues the certificate; returns PEM with a trailing newline. */
  async issue(subject: KubeletCertificateSubject): Promise<Buffer> {
    const serial = randomBytes(16);
    serial[0]! &= 0x7f; // positive and < 2^128
    const now = this.now().getTime();
    const publicKey = await webcrypto.subtle.importKey('spki', subject.publicKey.export({ type: 'spki', format: 'der' }), importParams(subject.publicKey), true, ['verify']);
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serial.toString('hex'),
      subject: new x509.Name(subject.subjectDer),
      issuer: this.caCert.subjectName,
      notBefore: new Date(now - 2 * 3600 * 1000),
      notAfter: new Date(now + 365 * DAY),
      publicKey,
      signingKey: this.signingKey,
      signingAlgorithm: this.signingAlgorithm,
      extensions: [
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth, x509.ExtendedKeyUsage.serverAuth]),
        new x509.BasicConstraintsExtension(false, undefined, true),
        ...(subject.ips.length ? [new x509.SubjectAlternativeNameExtension(subject.ips.map((ip) => ({ type: 'ip' as const, value: ip })))] : []),
      ],
    });
    return Buffer.from(`${cert.toString('pem')}\n`);
  }

  /** Subject Name DER for `system:node:<name>` in `system:nodes` (the CSR form). */
  static nodeSubjectDer(nodeName: string): ArrayBuffer {
    return new x509.Name([{ O: ['system:nodes'] }, { CN: [`system:node:${nodeName}`] }]).toArrayBuffer();
  }
}
