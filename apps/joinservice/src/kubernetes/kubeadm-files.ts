import { X509Certificate, createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { K8sError } from '@asterism/k8s';
import type { CertSansSource, ControlPlaneFiles } from '../ticket/ports.js';
import { ReloadingFile } from './reloading-file.js';

/** The control-plane PKI files handed to joining control planes (docs/protocol/join-ticket.md), relative to pki/. */
export const CONTROL_PLANE_FILES = ['ca.key', 'sa.key', 'front-proxy-ca.key', 'etcd/ca.key', 'ca.crt', 'sa.pub', 'front-proxy-ca.crt', 'etcd/ca.crt'] as const;

/** Reads the 8 control-plane files from `<kubernetesDir>/pki`; any missing file is an error. */
export class ControlPlaneFilesReader implements ControlPlaneFiles {
  constructor(private readonly kubernetesDir = '/etc/kubernetes') {}

  async read(): Promise<Array<{ name: string; data: Buffer }>> {
    return Promise.all(
      CONTROL_PLANE_FILES.map(async (name) => {
        try {
          return { name, data: await readFile(join(this.kubernetesDir, 'pki', name)) };
        } catch (err) {
          throw new K8sError('K8S_CONFIG_INVALID', `reading ${name}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, { cause: err });
        }
      }),
    );
  }
}

/** `apiServer.certSANs` from a kubeadm ClusterConfiguration YAML document. */
export function certSansFromClusterConfiguration(yaml: string): string[] {
  const doc = parse(yaml) as { apiServer?: { certSANs?: unknown } } | null;
  const sans = doc?.apiServer?.certSANs;
  if (sans === undefined || sans === null) return [];
  if (!Array.isArray(sans)) throw new K8sError('K8S_CONFIG_INVALID', 'apiServer.certSANs is not a list');
  return sans.map((s) => (typeof s === 'string' ? s : ''));
}

/**
 * `apiServer.certSANs` of the kubeadm ClusterConfiguration (mounted from the kubeadm-config
 * ConfigMap), parsed once and re-read only when the file changes.
 */
export class ClusterConfigurationSans implements CertSansSource {
  readonly #file: ReloadingFile<string[]>;

  constructor(path = '/var/kubeadm-config/ClusterConfiguration', recheckMs?: number) {
    this.#file = new ReloadingFile(path, certSansFromClusterConfiguration, recheckMs);
  }

  async certSans(): Promise<string[]> {
    return [...(await this.#file.get())];
  }
}

/** kubeadm's CA pin: `sha256:` + hex(SHA-256(SubjectPublicKeyInfo DER)) for every CA in a PEM bundle. */
export function caCertHashes(pemBundle: string): string[] {
  const blocks = [...pemBundle.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)].map((m) => m[0]);
  return blocks.map((pem) => {
    const spki = new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' });
    return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
  });
}

/** The discovery hash from an admin kubeconfig: CA data of the current context's cluster. */
export function discoveryHashFromKubeconfig(kubeconfigYaml: string): string {
  const kc = parse(kubeconfigYaml) as {
    'current-context'?: string;
    contexts?: Array<{ name: string; context?: { cluster?: string } }>;
    clusters?: Array<{ name: string; cluster?: { 'certificate-authority-data'?: string } }>;
  } | null;
  if (!kc || typeof kc !== 'object') throw new Error('kubeconfig is not a YAML object');
  const ctx = kc.contexts?.find((c) => c.name === kc['current-context']);
  const clusterName = ctx?.context?.cluster ?? kc.clusters?.[0]?.name;
  const cluster = kc.clusters?.find((c) => c.name === clusterName);
  if (!cluster) throw new Error('kubeconfig has no cluster for the current context');
  const data = cluster.cluster?.['certificate-authority-data'];
  if (!data) throw new Error('kubeconfig cluster has no certificate-authority-data');
  const hashes = caCertHashes(Buffer.from(data, 'base64').toString('utf8'));
  if (hashes.length === 0) throw new Error('kubeconfig CA data holds no certificate');
  return hashes[0]!;
}
