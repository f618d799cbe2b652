import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKeyPair = webcrypto.CryptoKeyPair;

const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const HOUR = 3600 * 1000;

/** A certificate with its private key, PEM encoded. */
export interface CertAndKey {
  certPem: string;
  keyPem: string;
  cert: x509.X509Certificate;
  keys: CryptoKeyPair;
}

async function newKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function keyPem(keys: CryptoKeyPair): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

function serial(): string {
  // Positive 16-byte serial (leading bit cleared).
  const b = Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)));
  b[0]! &= 0x7f;
  return b.toString('hex');
}

/** A self-signed CA (ECDSA P-256, 10 years). */
export async function createCa(commonName: string): Promise<CertAndKey> {
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: [{ CN: [commonName] }],
    notBefore: new Date(Date.now() - HOUR),
    notAfter: new Date(Date.now() + 10 * 365 * 24 * HOUR),
    keys,
    signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await keyPem(keys), cert, keys };
}

/** What a leaf certificate is for. */
export interface LeafOptions {
  commonName: string;
  organizations?: string[];
  usage: 'server' | 'client' | 'both';
  dnsNames?: string[];
  ips?: string[];
  days?: number;
}

/** A leaf certificate signed by `ca`. */
export async function createLeaf(ca: CertAndKey, opts: LeafOptions): Promise<CertAndKey> {
  const keys = await newKeys();
  const ekus = opts.usage === 'server' ? [x509.ExtendedKeyUsage.serverAuth] : opts.usage === 'client' ? [x509.ExtendedKeyUsage.clientAuth] : [x509.ExtendedKeyUsage.clientAuth, x509.ExtendedKeyUsage.serverAuth];
  const names: x509.JsonGeneralName[] = [...(opts.dnsNames ?? []).map((v) => ({ type: 'dns' as const, value: v })), ...(opts.ips ?? []).map((v) => ({ type: 'ip' as const, value: v }))];
  const subject: x509.JsonName = [{ CN: [opts.commonName] }, ...(opts.organizations?.length ? [{ O: opts.organizations }] : [])];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject,
    issuer: ca.cert.subjectName,
    notBefore: new Date(Date.now() - HOUR),
    notAfter: new Date(Date.now() + (opts.days ?? 365) * 24 * HOUR),
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension(ekus),
      await x509.AuthorityKeyIdentifierExtension.create(ca.keys.publicKey),
      ...(names.length ? [new x509.SubjectAlternativeNameExtension(names)] : []),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await keyPem(keys), cert, keys };
}

/** The control plane's PKI, laid out like kubeadm's /etc/kubernetes. */
export interface ControlPlanePki {
  /** Root of the layout (`<dir>/pki/...`, `<dir>/admin.conf`). */
  dir: string;
  ca: CertAndKey;
  frontProxyCa: CertAndKey;
  etcdCa: CertAndKey;
  apiserver: CertAndKey;
  frontProxyClient: CertAndKey;
  admin: CertAndKey;
  controllerManager: CertAndKey;
  serviceAccountKeyPem: string;
  serviceAccountPubPem: string;
  path(name: string): string;
}

/** Generates and writes a throwaway control-plane PKI (files 0600) under `dir`. */
export async function createControlPlanePki(dir: string, opts: { apiServerIps?: string[]; apiServerDnsNames?: string[] } = {}): Promise<ControlPlanePki> {
  const ca = await createCa('kubernetes');
  const frontProxyCa = await createCa('front-proxy-ca');
  const etcdCa = await createCa('etcd-ca');
  const apiserver = await createLeaf(ca, {
    commonName: 'kube-apiserver',
    usage: 'server',
    dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local', ...(opts.apiServerDnsNames ?? [])],
    ips: [...new Set(['127.0.0.1', '10.96.0.1', ...(opts.apiServerIps ?? [])])],
  });
  const frontProxyClient = await createLeaf(frontProxyCa, { commonName: 'front-proxy-client', usage: 'client' });
  const admin = await createLeaf(ca, { commonName: 'kubernetes-admin', organizations: ['system:masters'], usage: 'client' });
  const controllerManager = await createLeaf(ca, { commonName: 'system:kube-controller-manager', usage: 'client' });
  const sa = await newKeys();
  const serviceAccountKeyPem = await keyPem(sa);
  const serviceAccountPubPem = x509.PemConverter.encode(Buffer.from(await webcrypto.subtle.exportKey('spki', sa.publicKey)), 'PUBLIC KEY');

  const files: Record<string, string> = {
    'pki/ca.crt': ca.certPem,
    'pki/ca.key': ca.keyPem,
    'pki/front-proxy-ca.crt': frontProxyCa.certPem,
    'pki/front-proxy-ca.key': frontProxyCa.keyPem,
    'pki/etcd/ca.crt': etcdCa.certPem,
    'pki/etcd/ca.key': etcdCa.keyPem,
    'pki/apiserver.crt': apiserver.certPem,
    'pki/apiserver.key': apiserver.keyPem,
    'pki/front-proxy-client.crt': frontProxyClient.certPem,
    'pki/front-proxy-client.key': frontProxyClient.keyPem,
    'pki/sa.key': serviceAccountKeyPem,
    'pki/sa.pub': serviceAccountPubPem,
    'pki/admin.crt': admin.certPem,
    'pki/admin.key': admin.keyPem,
    'pki/controller-manager.crt': controllerManager.certPem,
    'pki/controller-manager.key': controllerManager.keyPem,
  };
  for (const [name, content] of Object.entries(files)) {
    const p = join(dir, name);
    await mkdir(dirname(p), { recursive: true, mode: 0o700 });
    await writeFile(p, content, { mode: 0o600 });
  }
  return { dir, ca, frontProxyCa, etcdCa, apiserver, frontProxyClient, admin, controllerManager, serviceAccountKeyPem, serviceAccountPubPem, path: (n) => join(dir, n) };
}
