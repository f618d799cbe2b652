import type { CollateralStore, StoredCollateral } from '@asterism/attestation';
import type { CertCacheStore } from './cert-cache.js';

/** Namespace of the collateral ConfigMaps (beside the SEV-SNP certificate cache). */
export const COLLATERAL_NAMESPACE = 'kube-system';

/** ConfigMap name of one collateral cache, e.g. `asterism-collateral-tdx-pcs`. */
export function collateralConfigMapName(cache: string): string {
  return `asterism-collateral-${cache.toLowerCase().replace(/[^a-z0-9-]/g, '-')}`;
}

/**
 * Persists verified collateral in one ConfigMap per cache (docs/collateral.md), so a restarted or
 * second joinservice replica does not need the vendor service for anything seen before. A data key
 * is the base64url of the cache key (ConfigMap keys allow no `/`); a value is JSON
 * `{"key", "payload" (base64), "fetchedAt"}`. Unreadable values are skipped: the cache refetches.
 */
export class ConfigMapCollateralStore implements CollateralStore {
  constructor(
    private readonly configMaps: CertCacheStore,
    private readonly namespace = COLLATERAL_NAMESPACE,
  ) {}

  async list(cache: string): Promise<StoredCollateral[]> {
    const cm = await this.configMaps.get(this.namespace, collateralConfigMapName(cache));
    return Object.values(cm?.data ?? {}).flatMap((value) => decodeRecord(value));
  }

  async put(cache: string, record: StoredCollateral): Promise<void> {
    const name = collateralConfigMapName(cache);
    const data = { [Buffer.from(record.key).toString('base64url')]: JSON.stringify({ key: record.key, payload: Buffer.from(record.payload).toString('base64'), fetchedAt: record.fetchedAt }) };
    if ((await this.configMaps.get(this.namespace, name)) === null) {
      try {
        await this.configMaps.create(this.namespace, name, data);
        return;
      } catch (err) {
        // Another replica created it first: fall through to the update.
        if ((err as { code?: string }).code !== 'K8S_ALREADY_EXISTS') throw err;
      }
    }
    await this.configMaps.updateKeys(this.namespace, name, data);
  }
}

function decodeRecord(value: string): StoredCollateral[] {
  try {
    const v = JSON.parse(value) as { key?: unknown; payload?: unknown; fetchedAt?: unknown };
    if (typeof v.key !== 'string' || typeof v.payload !== 'string' || typeof v.fetchedAt !== 'number') return [];
    return [{ key: v.key, payload: Buffer.from(v.payload, 'base64'), fetchedAt: v.fetchedAt }];
  } catch {
    return [];
  }
}
