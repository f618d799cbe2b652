/**
 * DCAP collateral for the TDX validators, from Intel PCS through the variant-neutral collateral
 * cache (docs/collateral.md; PCS endpoints: docs/protocol/tdx-dcap.md). Records are kept as PCS
 * served them (body + issuer chain header); each is verified against the configured Intel root
 * before first use; the joinservice persists them (ConfigMaps) and can run offline.
 */
import { X509Certificate } from 'node:crypto';
import type { CollateralCache } from '../collateral/cache.js';
import { CollateralView } from '../collateral/view.js';
import { CollateralFetchError } from '../collateral/errors.js';
import { signedDataRefreshAt } from '../collateral/refresh.js';
import { parseRetryAfter } from '../collateral/http-fetcher.js';
import type { CollateralFetcher, VerifiedCollateral } from '../collateral/ports.js';
import { INTEL_SGX_ROOT_CA_PEM } from '../config/roots.js';
import { AttestationError } from '../errors.js';
import { parseQeIdentity, parseTcbInfo, type DcapCollateral } from './collateral.js';
import { parsePemChain } from './pck.js';
import { checkRevocation, parseCrl, verifyChain } from './pki.js';
import { verifySignedCollateral } from './verifier.js';

/** The platform a quote comes from: its FMSPC and the CA that issued its PCK certificate. */
export interface TdxPlatform {
  /** 12 hex digits. */
  fmspc: string;
  ca: 'platform' | 'processor';
}

/** Where a TDX validator gets collateral (consumer-declared port). */
export interface TdxCollateralSource {
  collateral(platform: TdxPlatform, signal?: AbortSignal): Promise<DcapCollateral>;
}

/** Intel PCS service root (TDX and SGX certification APIs, v4). */
export const INTEL_PCS_BASE_URL = 'https://api.trustedservices.intel.com';
/** Intel SGX Root CA CRL distribution point. */
export const INTEL_ROOT_CRL_URL = 'https://certificates.trustedservices.intel.com/IntelSGXRootCA.der';

/** One cached PCS answer: the body and its issuer chain header. */
interface PcsRecord {
  body: Buffer;
  issuerChain: string;
}

/** Cache keys: `tcb/<fmspc>`, `qe-identity`, `pck-crl/<ca>`, `root-crl`. */
export function pcsRequest(key: string, baseUrl = INTEL_PCS_BASE_URL, rootCrlUrl = INTEL_ROOT_CRL_URL): { url: string; chainHeader?: string } {
  const [kind, arg] = key.split('/');
  if (kind === 'tcb' && /^[0-9a-f]{12}$/.test(arg ?? '')) return { url: `${baseUrl}/tdx/certification/v4/tcb?fmspc=${arg}`, chainHeader: 'tcb-info-issuer-chain' };
  if (kind === 'qe-identity' && arg === undefined) return { url: `${baseUrl}/tdx/certification/v4/qe/identity`, chainHeader: 'sgx-enclave-identity-issuer-chain' };
  if (kind === 'pck-crl' && (arg === 'platform' || arg === 'processor')) return { url: `${baseUrl}/sgx/certification/v4/pckcrl?ca=${arg}&encoding=der`, chainHeader: 'sgx-pck-crl-issuer-chain' };
  if (kind === 'root-crl' && arg === undefined) return { url: rootCrlUrl };
  throw new AttestationError('COLLATERAL_MALFORMED', `unknown TDX collateral key "${key}"`, { details: { key } });
}

/** Options of {@link pcsCollateralFetcher}. */
export interface PcsFetcherOptions {
  baseUrl?: string;
  rootCrlUrl?: string;
  fetchImpl?: typeof fetch;
  /** Largest body accepted (default 1 MiB). */
  maxBytes?: number;
}

/** Fetches PCS collateral; the record is `{"body": base64, "issuerChain": PEM}` (JSON). */
export function pcsCollateralFetcher(options: PcsFetcherOptions = {}): CollateralFetcher {
  const fetchImpl = options.fetchImpl ?? fetch;
  const maxBytes = options.maxBytes ?? 1 << 20;
  return async (key, signal) => {
    const { url, chainHeader } = pcsRequest(key, options.baseUrl, options.rootCrlUrl);
    let res: Response;
    try {
      res = await fetchImpl(url, { signal });
    } catch (err) {
      throw new CollateralFetchError(`GET ${url}: ${(err as Error)?.message ?? String(err)}`);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new CollateralFetchError(`GET ${url}: HTTP ${res.status}`, parseRetryAfter(res.headers.get('retry-after'), Date.now()), res.status);
    }
    const body = Buffer.from(await res.arrayBuffer());
    if (body.length === 0 || body.length > maxBytes) throw new CollateralFetchError(`GET ${url}: answer of ${body.length} bytes`, undefined, res.status);
    const chain = chainHeader ? res.headers.get(chainHeader) : '';
    if (chain === null) throw new CollateralFetchError(`GET ${url}: no ${chainHeader} header`, undefined, res.status);
    return encodePcsRecord({ body, issuerChain: decodeURIComponent(chain) });
  };
}

/** Serialises one record as the cache stores it. */
export function encodePcsRecord(r: PcsRecord): Buffer {
  return Buffer.from(JSON.stringify({ body: r.body.toString('base64'), issuerChain: r.issuerChain }));
}

function decodePcsRecord(key: string, payload: Uint8Array): PcsRecord {
  try {
    const v = JSON.parse(Buffer.from(payload).toString('utf8')) as { body?: unknown; issuerChain?: unknown };
    if (typeof v.body === 'string' && typeof v.issuerChain === 'string') return { body: Buffer.from(v.body, 'base64'), issuerChain: v.issuerChain };
  } catch {
    // reported below
  }
  throw new AttestationError('COLLATERAL_MALFORMED', `TDX collateral record "${key}" is not {"body","issuerChain"} JSON`, { details: { key } });
}

/**
 * Checks one record against the root: signed documents by their issuer chain and signature,
 * CRLs by their issuer. The quote verifier refuses a record past its "next update"
 * (COLLATERAL_EXPIRED), so that instant is the record's `notAfter` (never served later), and the
 * cache refreshes it in the background well before (docs/collateral.md "Refresh before expiry").
 */
export function verifyPcsRecord(root: X509Certificate, key: string, payload: Uint8Array, now: number): VerifiedCollateral<PcsRecord> {
  const record = decodePcsRecord(key, payload);
  const at = new Date(now);
  const kind = key.split('/')[0];
  let window: { issued: Date; nextUpdate: Date | undefined };
  if (kind === 'tcb') {
    const t = verifySignedCollateral(parseTcbInfo(record.body.toString('utf8')), record.issuerChain, root, at, 'TCB info', false);
    window = { issued: t.issueDate, nextUpdate: t.nextUpdate };
  } else if (kind === 'qe-identity') {
    const q = verifySignedCollateral(parseQeIdentity(record.body.toString('utf8')), record.issuerChain, root, at, 'QE identity', false);
    window = { issued: q.issueDate, nextUpdate: q.nextUpdate };
  } else {
    const crl = parseCrl(record.body, key);
    const issuer = kind === 'root-crl' ? root : parsePemChain(record.issuerChain, `${key} issuer chain`)[0]!;
    if (kind !== 'root-crl') verifyChain(parsePemChain(record.issuerChain, `${key} issuer chain`), root, at, `${key} issuer chain`);
    checkRevocation(crl, issuer, [], crl.thisUpdate, key);
    window = { issued: crl.thisUpdate, nextUpdate: crl.nextUpdate };
  }
  if (!window.nextUpdate) return { value: record };
  return { value: record, notAfter: window.nextUpdate.getTime(), refreshAt: signedDataRefreshAt(window.issued.getTime(), window.nextUpdate.getTime()) };
}

/** TDX collateral from a CollateralCache (PCS fetcher, store, offline mode) verified against `root`. */
export class CachedTdxCollateralSource implements TdxCollateralSource {
  readonly #view: CollateralView<PcsRecord>;

  constructor(cache: CollateralCache, root: Buffer | string = INTEL_SGX_ROOT_CA_PEM) {
    const trusted = new X509Certificate(root);
    this.#view = new CollateralView(cache, (key, payload, now) => verifyPcsRecord(trusted, key, payload, now));
  }

  async collateral(platform: TdxPlatform, signal?: AbortSignal): Promise<DcapCollateral> {
    const fmspc = platform.fmspc.toLowerCase();
    const [tcb, qe, pckCrl, rootCrl] = await Promise.all([
      this.#view.get(`tcb/${fmspc}`, signal),
      this.#view.get('qe-identity', signal),
      this.#view.get(`pck-crl/${platform.ca}`, signal),
      this.#view.get('root-crl', signal),
    ]);
    return {
      tcbInfo: tcb.body.toString('utf8'),
      tcbInfoIssuerChain: tcb.issuerChain,
      qeIdentity: qe.body.toString('utf8'),
      qeIdentityIssuerChain: qe.issuerChain,
      pckCrl: pckCrl.body,
      pckCrlIssuerChain: pckCrl.issuerChain,
      rootCrl: rootCrl.body,
    };
  }
}
