import { MetadataError, toInstance, type InstanceMetadata, type MetadataProvider } from './types.js';

/** Default base URL of the QEMU metadata API as seen from a node. */
export const QEMU_METADATA_BASE_URL = 'http://10.42.0.1:8080';

/**
 * Client of the qemu-metadata-API (docs/protocol/metadata.md): `/self`, `/peers`, `/endpoint`, `/initsecrethash`.
 * Unlike the reference it checks HTTP status codes, so a 404 page never becomes a hash or a node.
 */
export class QemuMetadataClient implements MetadataProvider {
  constructor(
    private readonly baseUrl: string = QEMU_METADATA_BASE_URL,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  private async get(path: string, signal?: AbortSignal): Promise<string> {
    let res: Response;
    try {
      res = await this.fetchImpl(`${this.baseUrl}${path}`, signal ? { signal } : {});
    } catch (err) {
      throw new MetadataError('METADATA_UNAVAILABLE', `GET ${path}: ${(err as Error).message}`, { cause: err, details: { path } });
    }
    const body = await res.text();
    if (res.status === 404) throw new MetadataError('METADATA_NOT_FOUND', `GET ${path}: 404 ${body.trim().slice(0, 200)}`, { details: { path, status: 404 } });
    if (res.status !== 200) {
      throw new MetadataError('METADATA_UNAVAILABLE', `GET ${path}: HTTP ${res.status}`, { details: { path, status: res.status } });
    }
    return body;
  }

  private async getJson(path: string, signal?: AbortSignal): Promise<unknown> {
    const body = await this.get(path, signal);
    try {
      return JSON.parse(body);
    } catch {
      throw new MetadataError('METADATA_MALFORMED', `GET ${path}: response is not JSON`, { details: { path } });
    }
  }

  async self(signal?: AbortSignal): Promise<InstanceMetadata> {
    return toInstance(await this.getJson('/self', signal), '/self');
  }

  async list(signal?: AbortSignal): Promise<InstanceMetadata[]> {
    const raw = await this.getJson('/peers', signal);
    if (!Array.isArray(raw)) throw new MetadataError('METADATA_MALFORMED', '/peers: expected a list');
    return raw.map((r, i) => toInstance(r, `/peers[${i}]`));
  }

  async getLoadBalancerEndpoint(signal?: AbortSignal): Promise<{ host: string; port: string }> {
    const raw = await this.getJson('/endpoint', signal);
    if (typeof raw !== 'string') throw new MetadataError('METADATA_MALFORMED', '/endpoint: expected a JSON string');
    return { host: raw, port: '6443' };
  }

  async initSecretHash(signal?: AbortSignal): Promise<string> {
    return this.get('/initsecrethash', signal);
  }

  async uid(): Promise<string> {
    return '';
  }
}
