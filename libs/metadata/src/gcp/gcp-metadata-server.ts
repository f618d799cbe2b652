import { parseTokenResponse, type AccessToken } from '../http/bearer-api.js';
import { MetadataHttp, type RetryPolicy } from '../http/metadata-http.js';
import { MetadataError } from '../types.js';

/** Base URL of the GCE metadata server (docs/protocol/cloud-metadata.md, "GCP"). */
export const GCP_METADATA_BASE_URL = 'http://metadata.google.internal';

/** What the metadata server says about this instance. */
export interface GcpInstance {
  name: string;
  project: string;
  zone: string;
  networkIp: string;
  aliasIpRanges: string[];
}

/**
 * GCE metadata server client. Requests carry `Metadata-Flavor: Google`; a response without the
 * same header did not come from the metadata server (a proxy or captive portal) and is refused.
 */
export class GcpMetadataServer {
  private readonly http: MetadataHttp;

  constructor(baseUrl: string = GCP_METADATA_BASE_URL, policy?: Partial<RetryPolicy>) {
    this.http = new MetadataHttp({ baseUrl, cloud: 'GCP', service: 'metadata server', headers: { 'Metadata-Flavor': 'Google' }, ...(policy ? { policy } : {}) });
  }

  get baseUrl(): string {
    return this.http.baseUrl;
  }

  /** GET `/computeMetadata/v1/<path>` as text. */
  async get(path: string, signal?: AbortSignal): Promise<string> {
    const res = await this.http.request(`/computeMetadata/v1/${path}`, { signal });
    if (res.headers.get('metadata-flavor') !== 'Google') {
      throw new MetadataError('METADATA_MALFORMED', `GCP: ${this.http.baseUrl} answered without Metadata-Flavor: Google (not the metadata server)`, { details: { path } });
    }
    return res.body;
  }

  /** An instance attribute (custom metadata key); undefined when unset. */
  async attribute(key: string, signal?: AbortSignal): Promise<string | undefined> {
    try {
      return await this.get(`instance/attributes/${encodeURIComponent(key)}`, signal);
    } catch (err) {
      if (err instanceof MetadataError && err.code === 'METADATA_NOT_FOUND') return undefined;
      throw err;
    }
  }

  async instance(signal?: AbortSignal): Promise<GcpInstance> {
    const zonePath = (await this.get('instance/zone', signal)).trim();
    const zone = zonePath.split('/').pop() ?? '';
    const name = (await this.get('instance/name', signal)).trim();
    const project = (await this.get('project/project-id', signal)).trim();
    const networkIp = (await this.get('instance/network-interfaces/0/ip', signal)).trim();
    if (!zone || !name || !project || !networkIp) throw new MetadataError('METADATA_MALFORMED', 'GCP metadata server: empty name, zone, project or network IP');
    let aliasText = '[]';
    try {
      aliasText = await this.get('instance/network-interfaces/0/ip-aliases/?recursive=true', signal);
    } catch (err) {
      if (!(err instanceof MetadataError && err.code === 'METADATA_NOT_FOUND')) throw err;
    }
    let aliases: unknown;
    try {
      aliases = JSON.parse(aliasText);
    } catch {
      aliases = undefined;
    }
    if (!Array.isArray(aliases) || aliases.some((a) => typeof a !== 'string')) throw new MetadataError('METADATA_MALFORMED', 'GCP metadata server: ip-aliases must be a list of strings');
    return { name, project, zone, networkIp, aliasIpRanges: aliases as string[] };
  }

  /** An access token of the instance's default service account. */
  async accessToken(signal?: AbortSignal): Promise<AccessToken> {
    const body = await this.get('instance/service-accounts/default/token', signal);
    let raw: unknown;
    try {
      raw = JSON.parse(body);
    } catch {
      throw new MetadataError('METADATA_MALFORMED', 'GCP metadata server: token response is not JSON');
    }
    return parseTokenResponse(raw, 'GCP metadata server', Date.now());
  }
}
