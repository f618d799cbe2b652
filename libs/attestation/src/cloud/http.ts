/**
 * Bounded HTTP for the cloud vTPM variants (docs/protocol/cloud-vtpm-variants.md): every request
 * has a deadline and a body size limit, so a slow or hostile endpoint cannot stall an issuer or
 * a validator, and transport failures become plain errors the caller wraps with its own code.
 */

/** Options of {@link fetchBounded}. */
export interface BoundedFetchOptions {
  readonly fetchImpl?: typeof fetch;
  /** Deadline of the whole request including the body (default 10 s). */
  readonly timeoutMs?: number;
  /** Largest accepted body (default 1 MiB). */
  readonly maxBytes?: number;
}

/** A response status and its (bounded) body. */
export interface BoundedResponse {
  readonly status: number;
  readonly body: Buffer;
}

/** Fetches `url` and reads at most `maxBytes` of its body before `timeoutMs` elapses. */
export async function fetchBounded(url: string, init: RequestInit, options: BoundedFetchOptions = {}, signal?: AbortSignal): Promise<BoundedResponse> {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 10_000);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const res = await (options.fetchImpl ?? fetch)(url, { ...init, signal: combined, redirect: 'error' });
  const max = options.maxBytes ?? 1 << 20;
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > max) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`${url}: body of ${declared} bytes exceeds ${max}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  if (res.body) {
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > max) throw new Error(`${url}: body exceeds ${max} bytes`);
      chunks.push(Buffer.from(chunk));
    }
  }
  return { status: res.status, body: Buffer.concat(chunks) };
}

/** Downloads a certificate (DER or PEM bytes, as served) from a URL named in another certificate. */
export type CertificateFetcher = (url: string, signal?: AbortSignal) => Promise<Buffer>;

/** A {@link CertificateFetcher} over HTTP(S): 200 only, 64 KiB at most, 10 s deadline by default. */
export function httpCertificateFetcher(options: BoundedFetchOptions = {}): CertificateFetcher {
  return async (url, signal) => {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`certificate URL ${url}: only http and https are fetched`);
    const res = await fetchBounded(url, { method: 'GET' }, { maxBytes: 64 * 1024, ...options }, signal);
    if (res.status !== 200) throw new Error(`certificate URL ${url}: HTTP ${res.status}`);
    return res.body;
  };
}
