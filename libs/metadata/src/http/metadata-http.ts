import { MetadataError } from '../types.js';

/** Timeouts and retries of one metadata endpoint (docs/protocol/cloud-metadata.md, "Timeouts"). */
export interface RetryPolicy {
  /** Deadline of one HTTP request in milliseconds. */
  timeoutMs: number;
  /** Attempts in total (1 = no retry). */
  attempts: number;
  /** Wait before the second attempt; doubled for each further attempt. */
  backoffMs: number;
}

/** Defaults: a metadata server answers in milliseconds; a missing one should fail in seconds, not minutes. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { timeoutMs: 2_000, attempts: 3, backoffMs: 200 };

/** Options of a {@link MetadataHttp}. */
export interface MetadataHttpOptions {
  /** Base URL without trailing slash, e.g. `http://169.254.169.254`. Injectable for tests. */
  baseUrl: string;
  /** Which cloud and which service, used in "not on <cloud>: <service> not reachable" errors. */
  cloud: string;
  service: string;
  /** Headers sent with every request (`Metadata: true`, `Metadata-Flavor: Google`). */
  headers?: Record<string, string>;
  /** A cloud API rather than the link-local metadata service: unreachable is `METADATA_UNAVAILABLE`, not "not on <cloud>". */
  cloudApi?: boolean;
  policy?: Partial<RetryPolicy>;
  fetchImpl?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
}

/** One request; `signal` is the caller's overall deadline (each attempt also has its own). */
export interface MetadataRequest {
  method?: 'GET' | 'PUT';
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
}

/** A response with status 200. */
export interface MetadataResponse {
  body: string;
  headers: Headers;
}

type Attempt = { kind: 'ok'; res: MetadataResponse } | { kind: 'retry'; error: MetadataError } | { kind: 'fail'; error: MetadataError };

function causeText(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError') return 'timed out';
  const c = e?.cause;
  if (c?.message) return c.message;
  return c?.code ?? e?.message ?? String(err);
}

/**
 * HTTP client of a link-local metadata service: per-request timeout, bounded retries with
 * exponential backoff for connection failures, timeouts, 429 and 5xx; 404 is `METADATA_NOT_FOUND`
 * at once; an endpoint that never answers becomes `METADATA_ENDPOINT_ABSENT` ("not on AWS: ...").
 */
export class MetadataHttp {
  readonly baseUrl: string;
  private readonly policy: RetryPolicy;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly o: MetadataHttpOptions) {
    this.baseUrl = o.baseUrl.replace(/\/+$/, '');
    this.policy = { ...DEFAULT_RETRY_POLICY, ...o.policy };
    this.fetchImpl = o.fetchImpl ?? fetch;
    this.sleep = o.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  /** Sends the request, retrying transient failures; resolves only on HTTP 200. */
  async request(path: string, req: MetadataRequest = {}): Promise<MetadataResponse> {
    let last: MetadataError | undefined;
    for (let i = 0; i < this.policy.attempts; i++) {
      if (i > 0) await this.sleep(this.policy.backoffMs * 2 ** (i - 1));
      this.throwIfAborted(path, req.signal);
      const a = await this.attempt(path, req);
      if (a.kind === 'ok') return a.res;
      if (a.kind === 'fail') throw a.error;
      last = a.error;
    }
    throw last!;
  }

  /** GET returning the body text. */
  async text(path: string, req: MetadataRequest = {}): Promise<string> {
    return (await this.request(path, req)).body;
  }

  /** GET returning the decoded JSON body. */
  async json(path: string, req: MetadataRequest = {}): Promise<unknown> {
    const body = await this.text(path, req);
    try {
      return JSON.parse(body) as unknown;
    } catch {
      throw new MetadataError('METADATA_MALFORMED', `${this.o.cloud} ${this.o.service} ${path}: response is not JSON`, { details: { path } });
    }
  }

  private throwIfAborted(path: string, signal: AbortSignal | undefined): void {
    if (signal?.aborted) throw new MetadataError('METADATA_UNAVAILABLE', `${this.o.cloud} ${this.o.service} ${path}: cancelled`, { details: { path } });
  }

  private async attempt(path: string, req: MetadataRequest): Promise<Attempt> {
    const timeout = AbortSignal.timeout(this.policy.timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    let res: Response;
    let body: string;
    try {
      res = await this.fetchImpl(`${this.baseUrl}${path}`, { method: req.method ?? 'GET', headers: { ...this.o.headers, ...req.headers }, signal, redirect: 'error' });
      body = await res.text();
    } catch (err) {
      if (req.signal?.aborted) return { kind: 'fail', error: new MetadataError('METADATA_UNAVAILABLE', `${this.o.cloud} ${this.o.service} ${path}: cancelled`, { cause: err, details: { path } }) };
      const why = timeout.aborted ? `timed out after ${this.policy.timeoutMs} ms` : causeText(err);
      const where = `${this.o.service} not reachable at ${this.baseUrl} (${why})`;
      const error = this.o.cloudApi
        ? new MetadataError('METADATA_UNAVAILABLE', `${this.o.cloud} ${where}`, { cause: err, details: { baseUrl: this.baseUrl, path } })
        : new MetadataError('METADATA_ENDPOINT_ABSENT', `not on ${this.o.cloud}: ${where}`, { cause: err, details: { baseUrl: this.baseUrl, path } });
      return { kind: 'retry', error };
    }
    if (res.status === 200) return { kind: 'ok', res: { body, headers: res.headers } };
    const details = { path, status: res.status };
    if (res.status === 404) return { kind: 'fail', error: new MetadataError('METADATA_NOT_FOUND', `${this.o.cloud} ${this.o.service} ${path}: 404`, { details }) };
    const error = new MetadataError('METADATA_UNAVAILABLE', `${this.o.cloud} ${this.o.service} ${path}: HTTP ${res.status} ${body.trim().slice(0, 120)}`, { details });
    return res.status === 429 || res.status >= 500 ? { kind: 'retry', error } : { kind: 'fail', error };
  }
}
