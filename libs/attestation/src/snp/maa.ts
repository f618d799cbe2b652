/**
 * Microsoft Azure Attestation tokens for the ID-key digest fallback (docs/protocol/sev-snp.md
 * §6): an RS256 JWT whose key is in the MAA instance's JWKS (`<maaURL>/certs`, keys as x5c
 * certificates or n/e), valid at the verification time, carrying base64(extraData) as
 * `x-ms-runtime.client-payload.nonce`.
 */
import { createPublicKey, verify, X509Certificate, type KeyObject } from 'node:crypto';
import { AttestationError } from '../errors.js';

/** Checks an MAA token for one document's extraData. */
export interface MaaTokenVerifier {
  verify(token: string, maaUrl: string, extraData: Uint8Array, signal?: AbortSignal): Promise<void>;
}

const invalid = (why: string, details: Record<string, unknown> = {}) => new AttestationError('MAA_TOKEN_INVALID', `MAA token: ${why}`, { details });

function part(s: string | undefined, what: string): Record<string, unknown> {
  if (!s || !/^[A-Za-z0-9_-]+$/.test(s)) throw invalid(`malformed ${what}`);
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
    return v as Record<string, unknown>;
  } catch {
    throw invalid(`malformed ${what}`);
  }
}

function jwkKey(jwk: Record<string, unknown>): KeyObject {
  const x5c = jwk['x5c'];
  if (Array.isArray(x5c) && typeof x5c[0] === 'string') return new X509Certificate(Buffer.from(x5c[0], 'base64')).publicKey;
  return createPublicKey({ key: jwk as never, format: 'jwk' });
}

/** Verifies MAA JWTs against JWKS fetched over HTTP (cached per URL for `cacheMs`). */
export class JwksMaaTokenVerifier implements MaaTokenVerifier {
  readonly #jwks = new Map<string, { at: number; keys: Array<Record<string, unknown>> }>();

  constructor(
    private readonly now: () => Date = () => new Date(),
    private readonly fetchImpl: typeof fetch = fetch,
    private readonly cacheMs = 300_000,
  ) {}

  async verify(token: string, maaUrl: string, extraData: Uint8Array, signal?: AbortSignal): Promise<void> {
    if (!maaUrl) throw invalid('maaURL is empty', { field: 'firmwareSignerConfig.maaURL' });
    const [h, p, s, extra] = token.split('.');
    if (extra !== undefined || s === undefined) throw invalid('not a compact JWS');
    const header = part(h, 'header');
    const payload = part(p, 'payload');
    if (header['alg'] !== 'RS256') throw invalid(`algorithm ${String(header['alg'])} is not RS256`, { alg: header['alg'] });
    const jwk = (await this.keys(maaUrl, signal)).find((k) => k['kid'] === header['kid']);
    if (!jwk) throw invalid(`no key ${JSON.stringify(header['kid'])} in ${maaUrl}/certs`, { kid: header['kid'] });
    let ok = false;
    try {
      ok = verify('sha256', Buffer.from(`${h}.${p}`), jwkKey(jwk), Buffer.from(s, 'base64url'));
    } catch {
      ok = false;
    }
    if (!ok) throw invalid('signature does not verify');
    const t = this.now().getTime() / 1000;
    if (typeof payload['exp'] === 'number' && t > payload['exp']) throw invalid('expired', { exp: payload['exp'] });
    if (typeof payload['nbf'] === 'number' && t < payload['nbf']) throw invalid('not yet valid', { nbf: payload['nbf'] });
    const runtime = payload['x-ms-runtime'] as Record<string, unknown> | undefined;
    const client = runtime?.['client-payload'] as Record<string, unknown> | undefined;
    const want = Buffer.from(extraData).toString('base64');
    if (client?.['nonce'] !== want) throw invalid('x-ms-runtime.client-payload.nonce does not match this document', { expected: want, actual: client?.['nonce'] ?? null });
  }

  private async keys(maaUrl: string, signal?: AbortSignal): Promise<Array<Record<string, unknown>>> {
    const hit = this.#jwks.get(maaUrl);
    if (hit && Date.now() - hit.at < this.cacheMs) return hit.keys;
    const url = `${maaUrl.replace(/\/$/, '')}/certs`;
    let body: unknown;
    try {
      const res = await this.fetchImpl(url, { signal: signal ?? AbortSignal.timeout(30_000) });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      body = await res.json();
    } catch (err) {
      throw new AttestationError('COLLATERAL_UNAVAILABLE', `fetching MAA keys from ${url}: ${(err as Error).message}`, { details: { url } });
    }
    const keys = (body as { keys?: unknown })?.keys;
    if (!Array.isArray(keys)) throw invalid(`${url} has no keys array`);
    const list = keys.filter((k): k is Record<string, unknown> => !!k && typeof k === 'object');
    this.#jwks.set(maaUrl, { at: Date.now(), keys: list });
    return list;
  }
}
