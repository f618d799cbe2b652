import 'reflect-metadata';
import { createPrivateKey, createPublicKey, randomBytes, verify as verifySignature, webcrypto, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AsnConvert } from '@peculiar/asn1-schema';
import { CertificationRequest } from '@peculiar/asn1-csr';
import { Extensions, id_ce_subjectAltName, Name as AsnName, SubjectAlternativeName } from '@peculiar/asn1-x509';
import * as x509 from '@peculiar/x509';
import { AsterismError } from '@asterism/errors';
import type { KubeletCertSigner } from '../ticket/ports.js';
import type { CsrValidator } from '../ticket/request-validation.js';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

/** Why a kubelet CSR or the CA files were refused. */
export class KubeletCaError extends AsterismError<'CSR_INVALID' | 'CA_INVALID'> {}

const NODE_PREFIX = 'system:node:';
const NODES_GROUP = 'system:nodes';
const OID_CN = '2.5.4.3';
const OID_O = '2.5.4.10';
const OID_EXTENSION_REQUEST = '1.2.840.113549.1.9.14';

/** Signature algorithms we accept on CSRs, with the hash node:crypto needs. */
const SIGNATURE_HASH: Record<string, string | null> = {
  '1.2.840.10045.4.3.2': 'sha256', // ecdsa-with-SHA256
  '1.2.840.10045.4.3.3': 'sha384', // ecdsa-with-SHA384
  '1.2.840.10045.4.3.4': 'sha512', // ecdsa-with-SHA512
  '1.2.840.113549.1.1.11': 'sha256', // sha256WithRSAEncryption
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.3.101.112': null, // Ed25519
};

/** A parsed, signature-checked kubelet CSR. */
export interface KubeletCsr {
  nodeName: string;
  subjectDer: ArrayBuffer;
  publicKey: KeyObject;
  ips: string[];
}

function attributeValues(name: AsnName, oid: string): string[] {
  return name.flatMap((rdn) => rdn.filter((a) => a.type === oid).map((a) => a.value.toString()));
}

/**
 * Parses a DER CSR and applies the reference's checks (SPEC.md §9.5): valid self-signature,
 * exactly one Organization `system:nodes`, CN `system:node:<name>` with a non-empty name.
 * Synchronous (node:crypto), so it can run in request validation before any key is fetched.
 */
export function parseKubeletCsr(der: Uint8Array): KubeletCsr {
  let csr: CertificationRequest;
  try {
    csr = AsnConvert.parse(Buffer.from(der), CertificationRequest);
  } catch (err) {
    throw new KubeletCaError('CSR_INVALID', `not a DER PKCS#10 certificate request: ${(err as Error).message}`);
  }
  const info = csr.certificationRequestInfo;
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey({ key: Buffer.from(AsnConvert.serialize(info.subjectPKInfo)), format: 'der', type: 'spki' });
  } catch (err) {
    throw new KubeletCaError('CSR_INVALID', `unsupported public key: ${(err as Error).message}`);
  }
  const algOid = csr.signatureAlgorithm.algorithm;
  if (!(algOid in SIGNATURE_HASH)) throw new KubeletCaError('CSR_INVALID', `unsupported signature algorithm ${algOid}`);
  const signed = Buffer.from(AsnConvert.serialize(info));
  let ok = false;
  try {
    ok = verifySignature(SIGNATURE_HASH[algOid] ?? null, signed, publicKey, Buffer.from(csr.signature));
  } catch {
    ok = false;
  }
  if (!ok) throw new KubeletCaError('CSR_INVALID', 'CSR signature does not verify with its public key');
  const orgs = attributeValues(info.subject, OID_O);
  if (orgs.length !== 1 || orgs[0] !== NODES_GROUP) throw new KubeletCaError('CSR_INVALID', `CSR organization must be exactly ["${NODES_GROUP}"], got ${JSON.stringify(orgs)}`);
  const cns = attributeValues(info.subject, OID_CN);
  const cn = cns[0] ?? '';
  if (cns.length !== 1 || !cn.startsWith(NODE_PREFIX) || cn.length === NODE_PREFIX.length) {
    throw new KubeletCaError('CSR_INVALID', `CSR common name must be "${NODE_PREFIX}<node name>", got ${JSON.stringify(cn.slice(0, 80))}`);
  }
  const ips: string[] = [];
  for (const attr of info.attributes) {
    if (attr.type !== OID_EXTENSION_REQUEST) continue;
    for (const value of attr.values) {
      const exts = AsnConvert.parse(value, Extensions);
      for (const ext of exts) {
        if (ext.extnID !== id_ce_subjectAltName) continue;
        const san = AsnConvert.parse(ext.extnValue, SubjectAlternativeName);
        for (const gn of san) if (gn.iPAddress) ips.push(gn.iPAddress);
      }
    }
  }
  return { nodeName: cn.slice(NODE_PREFIX.length), subjectDer: AsnConvert.serialize(info.subject), publicKey, ips };
}

const DAY = 24 * 3600 * 1000;

/**
 * The kubelet CA of the joinservice (SPEC.md §9.5): the cluster CA from `<pki>/ca.crt` and
 * `<pki>/ca.key` signs client+server certificates for validated kubelet CSRs.
 */
export class KubeletCa implements KubeletCertSigner, CsrValidator {
  private constructor(
    private readonly caCert: x509.X509Certificate,
    private readonly signingKey: webcrypto.CryptoKey,
    private readonly signingAlgorithm: webcrypto.Algorithm | webcrypto.EcdsaParams,
    private readonly now: () => Date,
  ) {}

  /** Loads `ca.crt` (first PEM block) and `ca.key` (SEC1, PKCS#1 or PKCS#8) from `pkiDir`. */
  static async load(pkiDir: string, now: () => Date = () => new Date()): Promise<KubeletCa> {
    const certPem = await readFile(join(pkiDir, 'ca.crt'), 'utf8');
    const keyPem = await readFile(join(pkiDir, 'ca.key'), 'utf8');
    return KubeletCa.fromPem(certPem, keyPem, now);
  }

  static async fromPem(certPem: string, keyPem: string, now: () => Date = () => new Date()): Promise<KubeletCa> {
    const block = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/.exec(certPem)?.[0];
    if (!block) throw new KubeletCaError('CA_INVALID', 'ca.crt holds no PEM certificate');
    const keyType = /-----BEGIN ([A-Z ]+)-----/.exec(keyPem)?.[1] ?? '';
    if (!['EC PRIVATE KEY', 'RSA PRIVATE KEY', 'PRIVATE KEY'].includes(keyType)) throw new KubeletCaError('CA_INVALID', `unsupported key type "${keyType}"`);
    const key = createPrivateKey(keyPem);
    const pkcs8 = key.export({ type: 'pkcs8', format: 'der' });
    let algorithm: webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams;
    let signingAlgorithm: webcrypto.Algorithm | webcrypto.EcdsaParams;
    if (key.asymmetricKeyType === 'ec') {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      const named = curve === 'prime256v1' ? 'P-256' : curve === 'secp384r1' ? 'P-384' : undefined;
      if (!named) throw new KubeletCaError('CA_INVALID', `unsupported CA curve ${curve}`);
      algorithm = { name: 'ECDSA', namedCurve: named };
      signingAlgorithm = { name: 'ECDSA', hash: named === 'P-256' ? 'SHA-256' : 'SHA-384' } as webcrypto.EcdsaParams;
    } else if (key.asymmetricKeyType === 'rsa') {
      algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
      signingAlgorithm = { name: 'RSASSA-PKCS1-v1_5' };
    } else {
      throw new KubeletCaError('CA_INVALID', `unsupported CA key algorithm ${key.asymmetricKeyType}`);
    }
    const signingKey = await webcrypto.subtle.importKey('pkcs8', pkcs8, algorithm, false, ['sign']);
    return new KubeletCa(new x509.X509Certificate(block), signingKey, signingAlgorithm, now);
  }

  nodeNameFromCsr(csrDer: Uint8Array): string {
    return parseKubeletCsr(csrDer).nodeName;
  }

  async sign(csrDer: Uint8Array): Promise<Buffer> {
    const csr = parseKubeletCsr(csrDer);
    const serial = randomBytes(16);
    serial[0]! &= 0x7f; // positive and < 2^128
    const now = this.now().getTime();
    const publicKey = await webcrypto.subtle.importKey('spki', csr.publicKey.export({ type: 'spki', format: 'der' }), spkiAlgorithm(csr.publicKey), true, ['verify']);
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serial.toString('hex'),
      subject: new x509.Name(csr.subjectDer),
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
        ...(csr.ips.length ? [new x509.SubjectAlternativeNameExtension(csr.ips.map((ip) => ({ type: 'ip' as const, value: ip })))] : []),
      ],
    });
    return Buffer.from(cert.toString('pem') + '\n');
  }
}

function spkiAlgorithm(key: KeyObject): webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams | webcrypto.Algorithm {
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    return { name: 'ECDSA', namedCurve: curve === 'secp384r1' ? 'P-384' : curve === 'secp521r1' ? 'P-521' : 'P-256' };
  }
  if (key.asymmetricKeyType === 'rsa') return { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  if (key.asymmetricKeyType === 'ed25519') return { name: 'Ed25519' };
  throw new KubeletCaError('CSR_INVALID', `unsupported CSR key type ${key.asymmetricKeyType}`);
}

