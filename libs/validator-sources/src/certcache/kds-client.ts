import type { KdsChainSource } from './cert-cache.js';

/** AMD's Key Distribution Service (public, product Milan as in the reference). */
export const AMD_KDS_BASE_URL = 'https://kdsintf.amd.com';

/** Fetches `/<vcek|vlek>/v1/Milan/cert_chain` (PEM: ASK then ARK) with a timeout and status check. */
export class HttpKdsChainSource implements KdsChainSource {
  constructor(
    private readonly baseUrl = AMD_KDS_BASE_URL,
    private readonly timeoutMs = 30_000,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  async certChain(signer: 'vcek' | 'vlek'): Promise<string> {
    const url = `${this.baseUrl}/${signer}/v1/Milan/cert_chain`;
    const res = await this.fetchImpl(url, { signal: AbortSignal.timeout(this.timeoutMs) });
    if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
    return res.text();
  }
}
