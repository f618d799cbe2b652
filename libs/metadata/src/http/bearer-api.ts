import { MetadataError } from '../types.js';
import { MetadataHttp, type RetryPolicy } from './metadata-http.js';

/** An OAuth2 access token and when it stops being usable (ms since the epoch). */
export interface AccessToken {
  token: string;
  expiresAt: number;
}

/**
 * Caches the access token a metadata server hands out (Azure managed identity, GCE service
 * account) until a minute before it expires. The token is a secret: it only ever goes into an
 * `Authorization` header, never into errors or logs.
 */
export class CachedToken {
  private cached: AccessToken | undefined;

  constructor(
    private readonly fetchToken: (signal?: AbortSignal) => Promise<AccessToken>,
    private readonly now: () => number = Date.now,
  ) {}

  async get(signal?: AbortSignal): Promise<string> {
    if (!this.cached || this.cached.expiresAt - 60_000 <= this.now()) this.cached = await this.fetchToken(signal);
    return this.cached.token;
  }
}

/** Reads `access_token` and a lifetime from a token response; never echoes the response. */
export function parseTokenResponse(raw: unknown, cloud: string, now: number): AccessToken {
  const o = (raw ?? {}) as Record<string, unknown>;
  if (typeof o.access_token !== 'string' || o.access_token === '') throw new MetadataError('METADATA_MALFORMED', `${cloud} token response has no access_token`);
  const expiresOn = Number(o.expires_on);
  const expiresIn = Number(o.expires_in);
  const expiresAt = Number.isFinite(expiresOn) && expiresOn > 0 ? expiresOn * 1000 : now + (Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 300) * 1000;
  return { token: o.access_token, expiresAt };
}

/** JSON GETs against a cloud REST API with a bearer token (retries and timeouts of {@link MetadataHttp}). */
export class BearerApi {
  private readonly http: MetadataHttp;

  constructor(
    baseUrl: string,
    cloud: string,
    service: string,
    private readonly token: CachedToken,
    policy?: Partial<RetryPolicy>,
  ) {
    this.http = new MetadataHttp({ baseUrl, cloud, service, cloudApi: true, policy: { timeoutMs: 10_000, ...policy } });
  }

  get baseUrl(): string {
    return this.http.baseUrl;
  }

  /** GET `path` (or an absolute continuation URL on the same origin) as JSON. */
  async get(pathOrUrl: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
    let path = pathOrUrl;
    if (/^https?:/.test(pathOrUrl)) {
      // Continuation links must stay on the API's origin: the token is never sent elsewhere.
      if (!pathOrUrl.startsWith(`${this.http.baseUrl}/`)) throw new MetadataError('METADATA_MALFORMED', 'continuation link points to another host', { details: { host: new URL(pathOrUrl).host } });
      path = pathOrUrl.slice(this.http.baseUrl.length);
    }
    const raw = await this.http.json(path, { headers: { Authorization: `Bearer ${await this.token.get(signal)}` }, signal });
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new MetadataError('METADATA_MALFORMED', `${path}: expected a JSON object`, { details: { path } });
    return raw as Record<string, unknown>;
  }
}
