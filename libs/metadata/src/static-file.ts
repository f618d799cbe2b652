import { readFile, stat } from 'node:fs/promises';
import { MetadataError, toInstance, type InstanceMetadata, type MetadataProvider } from './types.js';

/**
 * The local cluster's metadata: one JSON file shared by all simulated nodes plus the node's own
 * name. Every call looks at the file (a stat), so nodes added later become visible at once; it is
 * read and parsed again only when its inode, size or modification time changed (the joinservice
 * looks a peer up on every ticket). A file modified within the last second is not cached: a
 * second write in the same timestamp tick could keep all three.
 *
 * ```json
 * { "instances": [InstanceMetadata...], "loadBalancer": {"host": "127.0.0.1", "port": "6443"},
 *   "initSecretHash": "$2a$10$...", "uid": "local" }
 * ```
 */
export class StaticFileMetadata implements MetadataProvider {
  #cached: { ino: number; size: number; mtimeMs: number; value: Record<string, unknown> } | undefined;

  constructor(
    private readonly path: string,
    private readonly selfName: string,
  ) {}

  private async read(): Promise<Record<string, unknown>> {
    const unavailable = (err: unknown) =>
      new MetadataError('METADATA_UNAVAILABLE', `reading metadata file ${this.path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, { cause: err });
    let text: string;
    let st: { ino: number; size: number; mtimeMs: number };
    try {
      st = await stat(this.path);
      const c = this.#cached;
      if (c && c.ino === st.ino && c.size === st.size && c.mtimeMs === st.mtimeMs) return c.value;
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      throw unavailable(err);
    }
    const value = this.parse(text);
    // Keyed to the stat taken before the read: a replacement in between changes it, so the next call reads again.
    this.#cached = Date.now() - st.mtimeMs > 1000 ? { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, value } : undefined;
    return value;
  }

  private parse(text: string): Record<string, unknown> {
    try {
      const v = JSON.parse(text) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      /* fall through */
    }
    throw new MetadataError('METADATA_MALFORMED', `metadata file ${this.path} is not a JSON object`);
  }

  async list(): Promise<InstanceMetadata[]> {
    const file = await this.read();
    const raw = file.instances;
    if (!Array.isArray(raw)) throw new MetadataError('METADATA_MALFORMED', `metadata file ${this.path}: instances must be a list`);
    return raw.map((r, i) => toInstance(r, `instances[${i}]`));
  }

  async self(): Promise<InstanceMetadata> {
    const hit = (await this.list()).find((i) => i.Name === this.selfName);
    if (!hit) throw new MetadataError('METADATA_NOT_FOUND', `no instance named ${this.selfName} in ${this.path}`, { details: { name: this.selfName } });
    return hit;
  }

  async getLoadBalancerEndpoint(): Promise<{ host: string; port: string }> {
    const lb = (await this.read()).loadBalancer as { host?: unknown; port?: unknown } | undefined;
    if (!lb || typeof lb.host !== 'string') throw new MetadataError('METADATA_NOT_FOUND', `metadata file ${this.path} has no loadBalancer.host`);
    return { host: lb.host, port: typeof lb.port === 'string' ? lb.port : '6443' };
  }

  async initSecretHash(): Promise<string> {
    const h = (await this.read()).initSecretHash;
    if (typeof h !== 'string' || h === '') throw new MetadataError('METADATA_NOT_FOUND', `metadata file ${this.path} has no initSecretHash`);
    return h;
  }

  async uid(): Promise<string> {
    const u = (await this.read()).uid;
    return typeof u === 'string' ? u : '';
  }
}
