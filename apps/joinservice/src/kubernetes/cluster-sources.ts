import { readFile } from 'node:fs/promises';
import { ConfigMapStore, decodeComponents, formatBootstrapToken, NodeVersionReader, type BootstrapTokenCreator } from '@asterism/k8s';
import type { components } from '@asterism/proto';
import type { ComponentsSource, JoinToken, JoinTokenSource } from '../ticket/ports.js';
import { discoveryHashFromKubeconfig } from './kubeadm-files.js';

/**
 * Bootstrap tokens + discovery data for join tickets (docs/protocol/join-ticket.md). The issuer is normally a
 * SharedBootstrapTokens pool (docs/adr/0020-shared-bootstrap-tokens.md).
 */
export class KubeadmJoinTokens implements JoinTokenSource {
  constructor(
    private readonly issuer: BootstrapTokenCreator,
    /** Admin kubeconfig whose CA is pinned by joining nodes (`/etc/kubernetes/admin.conf`). */
    private readonly adminKubeconfigPath: string,
    private readonly apiServerEndpoint: string,
  ) {}

  async createJoinToken(ttlMs: number): Promise<JoinToken> {
    const hash = discoveryHashFromKubeconfig(await readFile(this.adminKubeconfigPath, 'utf8'));
    const token = await this.issuer.create({ ttlMs });
    return { apiServerEndpoint: this.apiServerEndpoint, token: formatBootstrapToken(token), discoveryTokenCaCertHash: hash };
  }
}

/** Components from the NodeVersion's referenced ConfigMap in kube-system. */
export class ClusterComponents implements ComponentsSource {
  constructor(
    private readonly nodeVersion: NodeVersionReader,
    private readonly configMaps: ConfigMapStore,
  ) {}

  componentsReference(): Promise<string> {
    return this.nodeVersion.componentsReference();
  }

  async components(configMapName: string): Promise<components.Component[]> {
    const json = await this.configMaps.getKey('kube-system', configMapName, 'components');
    if (json === null) throw new Error(`ConfigMap kube-system/${configMapName} has no key "components"`);
    return decodeComponents(json);
  }
}
