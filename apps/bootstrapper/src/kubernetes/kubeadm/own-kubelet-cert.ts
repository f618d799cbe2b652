import { createPublicKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { KubeletCertificateAuthority } from '@asterism/k8s/kubelet-certificate';
import { KubeletCsrGenerator } from '../../node-identity/kubelet-csr.js';
import type { NodeFileWriter } from '../../state/file-writer.js';
import { KUBEADM } from './configs.js';

/**
 * The first control plane's own kubelet certificate: the same template the joinservice uses for
 * joining nodes, issued by the CA kubeadm just created (`/etc/kubernetes/pki/ca.{crt,key}`), with
 * a fresh P-256 key; written to the kubelet paths the KubeletConfiguration names.
 */
export async function issueOwnKubeletCertificate(files: NodeFileWriter, nodeName: string, ips: string[]): Promise<void> {
  const ca = await KubeletCertificateAuthority.fromPem(await readFile(files.resolve('/etc/kubernetes/pki/ca.crt'), 'utf8'), await readFile(files.resolve('/etc/kubernetes/pki/ca.key'), 'utf8'));
  const { privateKeyPem } = await new KubeletCsrGenerator().create(nodeName, ips);
  const cert = await ca.issue({ subjectDer: KubeletCertificateAuthority.nodeSubjectDer(nodeName), publicKey: createPublicKey(privateKeyPem), ips });
  await files.writeExclusive(KUBEADM.kubeletKey, privateKeyPem);
  await files.writeExclusive(KUBEADM.kubeletCert, cert);
}
