/**
 * The attestation deny list (docs/adr/0037-continuous-attestation.md): disk UUIDs and attestation
 * keys of quarantined nodes, in ConfigMap `kube-system/asterism-attestation-denylist`. The monitor
 * (and `asterism node quarantine|readmit`) writes it; the joinservice reads it before issuing a
 * join or rejoin ticket. Entries are not secret (identifiers, a node name, a reason).
 */
import * as k8s from '@kubernetes/client-node';
import { isAsterismError } from '@asterism/errors';
import { fromApiError } from '@asterism/k8s';

/** Where the deny list lives. */
export const DENY_LIST = { namespace: 'kube-system', name: 'asterism-attestation-denylist' } as const;

/** One denied identifier. */
export interface DenyEntry {
  /** `disk` (a state disk UUID, lower case) or `ak` (an attestation key digest, `sha256:<hex>`). */
  kind: 'disk' | 'ak';
  id: string;
  node: string;
  reason: string;
  /** RFC 3339. */
  since: string;
}

/** ConfigMap key of an entry: `disk.<uuid>` or `ak.<hex>` (ConfigMap keys allow no colon). */
export function denyKey(kind: DenyEntry['kind'], id: string): string {
  return kind === 'disk' ? `disk.${id.toLowerCase()}` : `ak.${id.replace(/^sha256:/, '').toLowerCase()}`;
}

/** Decodes the ConfigMap's data; entries that do not parse are skipped (never widen access by failing open on one bad key). */
export function decodeDenyList(data: Record<string, string> | undefined): DenyEntry[] {
  const out: DenyEntry[] = [];
  for (const [key, value] of Object.entries(data ?? {})) {
    const m = /^(disk|ak)\.([0-9a-zA-Z-]+)$/.exec(key);
    if (!m) continue;
    let v: Partial<DenyEntry> = {};
    try {
      v = JSON.parse(value) as Partial<DenyEntry>;
    } catch {
      // An unreadable value still denies: the key is the identifier.
    }
    const kind = m[1] as DenyEntry['kind'];
    out.push({ kind, id: kind === 'ak' ? `sha256:${m[2]}` : m[2]!, node: String(v.node ?? ''), reason: String(v.reason ?? 'deny-listed'), since: String(v.since ?? '') });
  }
  return out;
}

/** Read and change the deny list with optimistic concurrency (a conflicting writer makes us re-read). */
export class DenyListStore {
  constructor(private readonly core: k8s.CoreV1Api) {}

  /** Every entry (none when the ConfigMap does not exist yet). */
  async list(): Promise<DenyEntry[]> {
    return decodeDenyList((await this.#read())?.data);
  }

  /** Adds (or refreshes) entries. */
  async add(entries: DenyEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.#update((data) => {
      for (const e of entries) data[denyKey(e.kind, e.id)] = JSON.stringify({ node: e.node, reason: e.reason, since: e.since });
    });
  }

  /** Removes every entry of `node`; returns how many were removed. */
  async removeNode(node: string): Promise<number> {
    let removed = 0;
    await this.#update((data) => {
      removed = 0;
      for (const e of decodeDenyList(data)) {
        if (e.node !== node) continue;
        delete data[denyKey(e.kind, e.id)];
        removed++;
      }
    });
    return removed;
  }

  async #read(): Promise<k8s.V1ConfigMap | undefined> {
    try {
      return await this.core.readNamespacedConfigMap(DENY_LIST);
    } catch (err) {
      const e = fromApiError(err, `reading ConfigMap ${DENY_LIST.namespace}/${DENY_LIST.name}`);
      if (e.code === 'K8S_NOT_FOUND') return undefined;
      throw e;
    }
  }

  /** Read-modify-write, retried on a conflict (another writer in between). */
  async #update(change: (data: Record<string, string>) => void): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const cm = await this.#read();
      const data = { ...(cm?.data ?? {}) };
      change(data);
      try {
        if (!cm) await this.core.createNamespacedConfigMap({ namespace: DENY_LIST.namespace, body: { metadata: { name: DENY_LIST.name, labels: { 'app.kubernetes.io/part-of': 'asterism' } }, data } });
        else await this.core.replaceNamespacedConfigMap({ ...DENY_LIST, body: { ...cm, data } });
        return;
      } catch (err) {
        const e = fromApiError(err, `writing ConfigMap ${DENY_LIST.namespace}/${DENY_LIST.name}`);
        if (attempt < 5 && isAsterismError(e, 'K8S_CONFLICT', 'K8S_ALREADY_EXISTS')) continue;
        throw e;
      }
    }
  }
}

/** What a ticket is checked by. */
export interface DenyListSource {
  list(): Promise<DenyEntry[]>;
}

/**
 * The joinservice's view of the deny list: re-read at most every `maxAgeMs` (a join flood costs
 * one read per period, not one per request), failing closed (a read error throws).
 */
export class CachedDenyList {
  #at = -Infinity;
  #entries: Promise<DenyEntry[]> | undefined;

  constructor(
    private readonly source: DenyListSource,
    private readonly maxAgeMs = 2_000,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** The entry that denies this disk UUID or attestation key, if any. */
  async find(q: { diskUuid?: string; akDigest?: string }): Promise<DenyEntry | undefined> {
    if (!this.#entries || this.clock() - this.#at > this.maxAgeMs) {
      this.#at = this.clock();
      this.#entries = this.source.list();
      this.#entries.catch(() => {
        this.#entries = undefined;
      });
    }
    const entries = await this.#entries;
    const disk = q.diskUuid?.toLowerCase();
    return entries.find((e) => (e.kind === 'disk' && e.id === disk) || (e.kind === 'ak' && q.akDigest !== undefined && !q.akDigest.startsWith('none:') && e.id === q.akDigest));
  }
}
