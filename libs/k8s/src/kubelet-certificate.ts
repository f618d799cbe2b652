import 'reflect-metadata';
import { createPrivateKey, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import * as x509 from '@peculiar/x509';
import { certificatePem, derOid, derTime, derTlv as tlv, positiveSerial } from '@asterism/crypto';
import { AsterismError } from '@asterism/errors';

const DAY = 24 * 3600 * 1000;

/** The CA files or a subject key cannot be used. */
export class KubeletCertificateError extends AsterismError<'CA_INVALID' | 'KEY_UNSUPPORTED'> {}

/** What a kubelet certificate is issued for: the node name and the key and IPs of its CSR. */
export interface KubeletCertificateSubject {
  /** DER of the subject Name (`O=system:nodes, CN=system:node:<name>`), copied verbatim. */
  subjectDer: ArrayBuffer;
  publicKey: KeyObject;
  /** SubjectPublicKeyInfo DER of `publicKey` if the caller has it already (saves an export). */
  spkiDer?: Uint8Array;
  ips: string[];
}

/** Signature algorithm of the CA key: the AlgorithmIdentifier DER and node:crypto's hash. */
interface CaSigning {
  algorithmDer: Buffer;
  hash: string;
}

/** ecdsa-with-SHA256/384 (no parameters), sha256WithRSAEncryption (NULL parameters). */
function caSigning(key: KeyObject): CaSigning {
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'prime256v1') return { algorithmDer: tlv(0x30, derOid('1.2.840.10045.4.3.2')), hash: 'sha256' };
    if (curve === 'secp384r1') return { algorithmDer: tlv(0x30, derOid('1.2.840.10045.4.3.3')), hash: 'sha384' };
    throw new KubeletCertificateError('CA_INVALID', `unsupported CA curve ${curve}`);
  }
  if (key.asymmetricKeyType === 'rsa') return { algorithmDer: tlv(0x30, derOid('1.2.840.113549.1.1.11'), Buffer.from([0x05, 0x00])), hash: 'sha256' };
  throw new KubeletCertificateError('CA_INVALID', `unsupported CA key algorithm ${key.asymmetricKeyType}`);
}

/** The 4 or 16 address bytes of an IP SAN. */
export function ipAddressBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  if (!isIPv6(ip)) throw new KubeletCertificateError('KEY_UNSUPPORTED', `invalid IP address ${JSON.stringify(ip.slice(0, 64))}`);
  let text = ip.replace(/%.*$/, '');
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const groups = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const h = groups(head);
  const t = groups(tail);
  const all = tail === undefined ? h : [...h, ...Array<number>(8 - h.length - t.length).fill(0), ...t];
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

// Extensions of every kubelet certificate: keyUsage (critical) digitalSignature|keyEncipherment,
// extKeyUsage clientAuth + serverAuth, basicConstraints (critical) CA:false.
const KEY_USAGE = tlv(0x30, derOid('2.5.29.15'), Buffer.from([0x01, 0x01, 0xff]), tlv(0x04, Buffer.from([0x03, 0x02, 0x05, 0xa0])));
const EXT_KEY_USAGE = tlv(0x30, derOid('2.5.29.37'), tlv(0x04, tlv(0x30, derOid('1.3.6.1.5.5.7.3.2'), derOid('1.3.6.1.5.5.7.3.1'))));
const BASIC_CONSTRAINTS = tlv(0x30, derOid('2.5.29.19'), Buffer.from([0x01, 0x01, 0xff]), tlv(0x04, Buffer.from([0x30, 0x00])));
const SAN_OID = derOid('2.5.29.17');
// [0] EXPLICIT INTEGER 2 (v3).
const VERSION_3 = Buffer.from('a003020102', 'hex');

/**
 * The cluster CA issuing kubelet certificates (docs/protocol: kubelet certificates): client and
 * server auth, 1 year, valid from 2 hours ago (clock skew), CA:false, the CSR's IP SANs. One home
 * for the template, used by the joinservice for joining nodes and by the first control plane for
 * its own kubelet. RSA (kubeadm's default) and ECDSA CAs. The certificate is written as DER
 * directly and signed with node:crypto (libs/crypto's DER writer, like the aTLS certificate): it
 * sits on every join ticket's path.
 */
export class KubeletCertificateAuthority {
  private constructor(
    /** DER of the CA certificate's subject: the issuer of every certificate we sign. */
    private readonly issuerDer: Buffer,
    private readonly signingKey: KeyObject,
    private readonly signing: CaSigning,
    private readonly now: () => Date,
  ) {}

  /** From `ca.crt` (first PEM block) and `ca.key` (SEC1, PKCS#1 or PKCS#8). */
  static async fromPem(certPem: string, keyPem: string, now: () => Date = () => new Date()): Promise<KubeletCertificateAuthority> {
    const block = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/.exec(certPem)?.[0];
    if (!block) throw new KubeletCertificateError('CA_INVALID', 'ca.crt holds no PEM certificate');
    const keyType = /-----BEGIN ([A-Z ]+)-----/.exec(keyPem)?.[1] ?? '';
    if (!['EC PRIVATE KEY', 'RSA PRIVATE KEY', 'PRIVATE KEY'].includes(keyType)) throw new KubeletCertificateError('CA_INVALID', `unsupported key type "${keyType}"`);
    const key = createPrivateKey(keyPem);
    const signing = caSigning(key);
    const issuerDer = Buffer.from(new x509.X509Certificate(block).subjectName.toArrayBuffer());
    return new KubeletCertificateAuthority(issuerDer, key, signing, now);
  }

  /** Issues the certificate; returns PEM with a trailing newline. */
  async issue(subject: KubeletCertificateSubject): Promise<Buffer> {
    const type = subject.publicKey.asymmetricKeyType;
    if (type !== 'ec' && type !== 'rsa' && type !== 'ed25519') throw new KubeletCertificateError('KEY_UNSUPPORTED', `unsupported kubelet key type ${type}`);
    const serial = randomBytes(16);
    serial[0]! &= 0x7f; // positive and < 2^128
    const now = this.now().getTime();
    const spki = subject.spkiDer ? Buffer.from(subject.spkiDer) : subject.publicKey.export({ type: 'spki', format: 'der' });
    const extensions = [KEY_USAGE, EXT_KEY_USAGE, BASIC_CONSTRAINTS];
    if (subject.ips.length > 0) {
      const names = subject.ips.map((ip) => tlv(0x87, ipAddressBytes(ip)));
      extensions.push(tlv(0x30, SAN_OID, tlv(0x04, tlv(0x30, ...names))));
    }
    const tbs = tlv(
      0x30,
      VERSION_3,
      tlv(0x02, positiveSerial(serial)),
      this.signing.algorithmDer,
      this.issuerDer,
      tlv(0x30, derTime(now - 2 * 3600 * 1000), derTime(now + 365 * DAY)),
      Buffer.from(subject.subjectDer),
      spki,
      tlv(0xa3, tlv(0x30, ...extensions)),
    );
    const signature = sign(this.signing.hash, tbs, this.signingKey);
    const der = tlv(0x30, tbs, this.signing.algorithmDer, tlv(0x03, Buffer.from([0]), signature));
    return Buffer.from(certificatePem(der));
  }

  /** Subject Name DER for `system:node:<name>` in `system:nodes` (the CSR form). */
  static nodeSubjectDer(nodeName: string): ArrayBuffer {
    return new x509.Name([{ O: ['system:nodes'] }, { CN: [`system:node:${nodeName}`] }]).toArrayBuffer();
  }
}
