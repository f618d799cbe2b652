import type { CollateralStore, StoredCollateral } from './ports.js';

/** A CollateralStore in memory (tests, the CLI, processes without Kubernetes). */
export class MemoryCollateralStore implements CollateralStore {
  readonly records = new Map<string, Map<string, StoredCollateral>>();

  async list(cache: string): Promise<StoredCollateral[]> {
    return [...(this.records.get(cache)?.values() ?? [])];
  }

  async put(cache: string, record: StoredCollateral): Promise<void> {
    let m = this.records.get(cache);
    if (!m) this.records.set(cache, (m = new Map()));
    m.set(record.key, record);
  }
}
