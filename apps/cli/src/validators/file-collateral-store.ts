import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CollateralStore, StoredCollateral } from '@asterism/attestation';

/**
 * Verified collateral kept in a directory between CLI runs (`--collateral-dir`), so repeated
 * `asterism verify` runs do not ask the vendor service again and `--collateral-offline` can work
 * without it (docs/collateral.md). One JSON file per record under `<dir>/<cache>/`. What is read
 * back is only a candidate: the collateral cache verifies it against the configured root before
 * any use, so a tampered file is ignored, never trusted.
 */
export class FileCollateralStore implements CollateralStore {
  constructor(private readonly dir: string) {}

  async list(cache: string): Promise<StoredCollateral[]> {
    const folder = this.#folder(cache);
    let names: string[];
    try {
      names = await readdir(folder);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const out: StoredCollateral[] = [];
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      const record = parseRecord(await readFile(join(folder, name), 'utf8'));
      // A file that does not parse, or names another key than its file name, is skipped: the
      // cache then treats the key as missing (fetch, or COLLATERAL_UNAVAILABLE when offline).
      if (record && fileName(record.key) === name) out.push(record);
    }
    return out;
  }

  async put(cache: string, record: StoredCollateral): Promise<void> {
    const folder = this.#folder(cache);
    await mkdir(folder, { recursive: true });
    const file = join(folder, fileName(record.key));
    const body = JSON.stringify({ key: record.key, fetchedAt: record.fetchedAt, payload: Buffer.from(record.payload).toString('base64') });
    // Write, then rename: a concurrent reader sees the old record or the new one, never half.
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, body);
    await rename(tmp, file);
  }

  #folder(cache: string): string {
    if (!/^[a-z0-9-]+$/.test(cache)) throw new Error(`collateral cache name ${JSON.stringify(cache)} is not a folder name`);
    return join(this.dir, cache);
  }
}

/** Cache keys contain "/" (e.g. `tcb/50806f000000`): percent-encoded into one file name. */
function fileName(key: string): string {
  return `${encodeURIComponent(key)}.json`;
}

function parseRecord(text: string): StoredCollateral | undefined {
  try {
    const v = JSON.parse(text) as { key?: unknown; fetchedAt?: unknown; payload?: unknown };
    if (typeof v.key !== 'string' || typeof v.fetchedAt !== 'number' || typeof v.payload !== 'string') return undefined;
    return { key: v.key, fetchedAt: v.fetchedAt, payload: Buffer.from(v.payload, 'base64') };
  } catch {
    return undefined;
  }
}
