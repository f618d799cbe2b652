import { CryptoError } from './errors.js';
import type { MasterSecret } from './key-hierarchy.js';

/** `storage://no-store`: the only storage backend a cluster KMS needs. */
export const NO_STORE_URI = 'storage://no-store';

/** A parsed `kms://` URI. Cloud KMS backends are recognised but not implemented here. */
export type KmsConfig =
  | { type: 'cluster-kms'; masterSecret: MasterSecret }
  | { type: 'aws' | 'azure' | 'gcp'; params: Record<string, string> };

/** A parsed `storage://` URI. */
export type StorageConfig = { type: 'no-store' } | { type: 'aws' | 'azure' | 'gcp'; params: Record<string, string> };

const KMS_PARAMS = {
  aws: ['region', 'accessKeyID', 'accessKey', 'keyName'],
  azure: ['tenantID', 'clientID', 'clientSecret', 'vaultName', 'vaultType', 'keyName'],
  gcp: ['projectID', 'location', 'keyRing', 'credentialsPath', 'keyName'],
} as const;

const STORAGE_PARAMS = {
  aws: ['bucket', 'region', 'accessKeyID', 'accessKey'],
  azure: ['account', 'container', 'tenantID', 'clientID', 'clientSecret'],
  gcp: ['projectID', 'bucket', 'credentialsPath'],
} as const;

/** URL-safe base64 with `=` padding (Go base64.URLEncoding). */
export function encodeBase64UrlPadded(data: Uint8Array): string {
  return Buffer.from(data).toString('base64').replaceAll('+', '-').replaceAll('/', '_');
}

/** Strict decoder for URL-safe base64 with padding; rejects other alphabets and bad padding. */
export function decodeBase64UrlPadded(text: string): Buffer {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9_-]*={0,2}$/.test(text)) {
    throw new CryptoError('URI_INVALID', 'value is not URL-safe base64 with padding');
  }
  const out = Buffer.from(text.replaceAll('-', '+').replaceAll('_', '/'), 'base64');
  if (encodeBase64UrlPadded(out) !== text) throw new CryptoError('URI_INVALID', 'value is not canonical URL-safe base64');
  return out;
}

/** Builds the URI the CLI sends: `kms://cluster-kms?key=<b64url>&salt=<b64url>`. */
export function encodeClusterKmsUri(master: MasterSecret): string {
  return `kms://cluster-kms?key=${encodeBase64UrlPadded(master.key)}&salt=${encodeBase64UrlPadded(master.salt)}`;
}

function parseUri(uri: string, scheme: string): { host: string; query: URLSearchParams } {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new CryptoError('URI_INVALID', `invalid ${scheme} URI`);
  }
  if (url.protocol !== `${scheme}:`) {
    throw new CryptoError('URI_INVALID', `invalid scheme: expected "${scheme}", got "${url.protocol.replace(/:$/, '')}"`);
  }
  return { host: url.hostname, query: url.searchParams };
}

/** Reads required query parameters; like the reference, values are unescaped once more after query parsing. */
function required(query: URLSearchParams, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const raw = query.get(name);
    if (!raw) throw new CryptoError('URI_MISSING_PARAMETER', `missing query parameter "${name}"`, { details: { parameter: name } });
    let value: string;
    try {
      value = decodeURIComponent(raw);
    } catch {
      throw new CryptoError('URI_INVALID', `query parameter "${name}" is not properly escaped`, { details: { parameter: name } });
    }
    out[name] = value;
  }
  return out;
}

/** Parses a `kms://` URI. Error messages never contain parameter values (they may be secrets). */
export function parseKmsUri(uri: string): KmsConfig {
  const { host, query } = parseUri(uri, 'kms');
  if (host === 'cluster-kms') {
    const p = required(query, ['key', 'salt']);
    return { type: 'cluster-kms', masterSecret: { key: decodeBase64UrlPadded(p.key!), salt: decodeBase64UrlPadded(p.salt!) } };
  }
  if (host === 'aws' || host === 'azure' || host === 'gcp') return { type: host, params: required(query, KMS_PARAMS[host]) };
  throw new CryptoError('URI_UNKNOWN_KMS', 'unknown KMS type', { details: { host } });
}

/** Parses a `storage://` URI. */
export function parseStorageUri(uri: string): StorageConfig {
  const { host, query } = parseUri(uri, 'storage');
  if (host === 'no-store') return { type: 'no-store' };
  if (host === 'aws' || host === 'azure' || host === 'gcp') return { type: host, params: required(query, STORAGE_PARAMS[host]) };
  throw new CryptoError('URI_UNKNOWN_STORAGE', 'unknown storage type', { details: { host } });
}
