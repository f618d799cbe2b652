/**
 * A CollateralFetcher over HTTP GET: 2xx bodies are the payload; other answers become
 * CollateralFetchError with the status and the Retry-After delay (seconds or an HTTP date), so
 * the cache backs off the way the remote service asks.
 */
import { CollateralFetchError } from './errors.js';
import type { CollateralFetcher } from './ports.js';

/** Options of {@link httpCollateralFetcher}. */
export interface HttpCollateralFetcherOptions {
  /** Request headers (e.g. `Accept`). */
  readonly headers?: Record<string, string>;
  /** Largest body accepted (default 1 MiB). */
  readonly maxBytes?: number;
  readonly fetchImpl?: typeof fetch;
  readonly now?: () => number;
}

/** Parses Retry-After (delta seconds or HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** GETs `urlFor(key)`; the fetch is aborted with the cache's signal. */
export function httpCollateralFetcher(urlFor: (key: string) => string, options: HttpCollateralFetcherOptions = {}): CollateralFetcher {
  const fetchImpl = options.fetchImpl ?? fetch;
  const maxBytes = options.maxBytes ?? 1 << 20;
  return async (key, signal) => {
    const url = urlFor(key);
    let res: Response;
    try {
      res = await fetchImpl(url, { signal, ...(options.headers ? { headers: options.headers } : {}), redirect: 'follow' });
    } catch (err) {
      throw new CollateralFetchError(`GET ${url}: ${(err as Error)?.message ?? String(err)}`);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new CollateralFetchError(`GET ${url}: HTTP ${res.status}`, parseRetryAfter(res.headers.get('retry-after'), (options.now ?? Date.now)()), res.status);
    }
    const body = Buffer.from(await res.arrayBuffer());
    if (body.length === 0) throw new CollateralFetchError(`GET ${url}: empty answer`, undefined, res.status);
    if (body.length > maxBytes) throw new CollateralFetchError(`GET ${url}: answer of ${body.length} bytes exceeds ${maxBytes}`, undefined, res.status);
    return body;
  };
}
