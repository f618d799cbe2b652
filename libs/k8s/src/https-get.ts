import { request, type RequestOptions } from 'node:https';

/** TLS and timing options of {@link httpsGetText}. */
export type HttpsGetOptions = Pick<RequestOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized'> & {
  /** Socket inactivity limit (default 10 s); the request fails with "timeout". */
  timeoutMs?: number;
  signal?: AbortSignal;
};

/**
 * One HTTPS GET with the body read as UTF-8 text, for the few raw API server reads that a
 * Kubernetes client cannot make (anonymous discovery before any CA is trusted, /readyz probes).
 * Resolves with any status; rejects on connection errors, the timeout or an abort.
 */
export function httpsGetText(url: string | URL, options: HttpsGetOptions = {}): Promise<{ status: number; body: string }> {
  const { timeoutMs = 10_000, signal, ...tls } = options;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', ...tls, timeout: timeoutMs, ...(signal ? { signal } : {}) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}
