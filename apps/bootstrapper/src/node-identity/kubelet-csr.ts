import 'reflect-metadata';
import { createPrivateKey, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { KubeletCsrFactory } from '../joinclient/ports.js';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/**
 * The kubelet's key pair and CSR (docs/protocol/bootstrapper.md): a fresh ECDSA P-256 key, subject
 * `O=system:nodes, CN=system:node:<name>`, IP SANs = the node's VPC IP. The private key is returned
 * as PEM `EC PRIVATE KEY` (SEC1) for the node's kubelet files and never sent anywhere.
 */
export class KubeletCsrGenerator implements KubeletCsrFactory {
  async create(nodeName: string, ips: string[]): Promise<{ csrDer: Buffer; privateKeyPem: string }> {
    const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
    const csr = await x509.Pkcs10CertificateRequestGenerator.create({
      name: [{ O: ['system:nodes'] }, { CN: [`system:node:${nodeName}`] }],
      keys,
      signingAlgorithm: EC,
      extensions: ips.length ? [new x509.SubjectAlternativeNameExtension(ips.map((ip) => ({ type: 'ip' as const, value: ip })))] : [],
    });
    const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
    const privateKeyPem = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({ type: 'sec1', format: 'pem' }).toString();
    return { csrDer: Buffer.from(csr.rawData), privateKeyPem };
  }
}
