import { ConfigMapStore, decodeComponents, formatBootstrapToken, NodeVersionReader, type BootstrapTokenCreator } from '@asterism/k8s';
import type { components } from '@asterism/proto';
import type { ComponentsSource, JoinToken, JoinTokenSource } from '../ticket/ports.js';
import { discoveryHashFromKubeconfig } from './kubeadm-files.js';
import { ReloadingFile } from './reloading-file.js';

/**
 * Bootstrap tokens + discovery data for join tickets (docs/protocol/join-ticket.md). The issuer is normally a
 * SharedBootstrapTokens pool (docs/adr/0020-shared-bootstrap-tokens.md). The discovery hash is
 * computed once from the admin kubeconfig and again only when that file changes.
 */
export class KubeadmJoinTokens implements JoinTokenSource {
  readonly #discoveryHash: ReloadingFile<string>;

  constructor(
    private readonly issuer: BootstrapTokenCreator,
    /** Admin kubeconfig whose CA is pinned by joining nodes (`/etc/kubernetes/admin.conf`). */
    adminKubeconfigPath: string,
    private readonly apiServerEndpoint: string,
    recheckMs?: number,
  ) {
    this.#discoveryHash = new ReloadingFile(adminKubeconfigPath, discoveryHashFromKubeconfig, recheckMs);
  }

  async createJoinToken(ttlMs: number): Promise<JoinToken> {
    const [hash, token] = await Promise.all([this.#discoveryHash.get(), this.issuer.create({ ttlMs })]);
    return { apiServerEndpoint: this.apiServerEndpoint, token: formatBootstrapToken(token), discoveryTokenCaCertHash: hash };
  }
}

/** How long the NodeVersion's components reference and a components ConfigMap are reused. */
export const COMPONENTS_CACHE_MS = 2000;

/**
 * Components from the NodeVersion's referenced ConfigMap in kube-system. Both lookups are reused
 * for `cacheMs` (concurrent tickets share one request), so a NodeVersion change (an upgrade)
 * reaches joining nodes within that time instead of costing two API calls per ticket.
 */
export class ClusterComponents implements ComponentsSource {
  readonly #reference: TtlCache<string>;
  readonly #components: TtlCache<components.Component[]>;

  constructor(
    private readonly nodeVersion: NodeVersionReader,
    private readonly configMaps: ConfigMapStore,
    cacheMs = COMPONENTS_CACHE_MS,
    now: () => number = () => performance.now(),
  ) {
    this.#reference = new TtlCache(cacheMs, now);
    this.#components = new TtlCache(cacheMs, now);
  }

  componentsReference(): Promise<string> {
    return this.#reference.get('', () => this.nodeVersion.componentsReference());
  }

  components(configMapName: string): Promise<components.Component[]> {
    return this.#components.get(configMapName, async () => {
      const json = await this.configMaps.getKey('kube-system', configMapName, 'components');
      if (json === null) throw new Error(`ConfigMap kube-system/${configMapName} has no key "components"`);
      return decodeComponents(json);
    });
  }
}

/** Promises kept per key for `ttlMs` (concurrent callers share one load); failures are not kept. */
class TtlCache<V> {
  readonly #entries = new Map<string, { at: number; value: Promise<V> }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  get(key: string, load: () => Promise<V>): Promise<V> {
    const t = this.now();
    const hit = this.#entries.get(key);
    if (hit && t - hit.at < this.ttlMs) return hit.value;
    for (const [k, e] of this.#entries) if (t - e.at >= this.ttlMs) this.#entries.delete(k);
    const entry = { at: t, value: load() };
    this.#entries.set(key, entry);
    entry.value.catch(() => {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
    });
    return entry.value;
  }
}
