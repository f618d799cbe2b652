/**
 * Google credentials of the operator's machine for the Compute API call the gcp-sev-es and
 * gcp-sev-snp validators make (getShieldedInstanceIdentity, docs/protocol/cloud-vtpm-variants.md
 * §4). On a node the joinservice uses the VM's service account from the metadata server; an
 * operator's machine has none, so the CLI looks, in this order, for:
 *   1. `GOOGLE_OAUTH_ACCESS_TOKEN`: a ready access token (e.g. `gcloud auth print-access-token`);
 *   2. Application Default Credentials: the JSON file named by `GOOGLE_APPLICATION_CREDENTIALS`,
 *      else `~/.config/gcloud/application_default_credentials.json` (`gcloud auth
 *      application-default login`), of type `authorized_user` (refresh token) or
 *      `service_account` (key, signed JWT grant).
 * Nothing found is a {@link CliValidatorError} naming these sources. Tokens, refresh tokens and
 * keys never appear in errors.
 */
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fetchBounded, type AccessTokenSource } from '@asterism/attestation';
import { CliValidatorError } from './errors.js';

/** Google's OAuth token endpoint (used when the credentials file names none). */
export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';
/** Read-only Compute scope asked for with a service-account key. */
const COMPUTE_READONLY_SCOPE = 'https://www.googleapis.com/auth/compute.readonly';

/** What the CLI tells an operator who has no Google credentials. */
export const GCP_CREDENTIALS_HINT =
  'set GOOGLE_OAUTH_ACCESS_TOKEN (e.g. $(gcloud auth print-access-token)), or provide Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS=<key file>, or gcloud auth application-default login)';

/** The access-token source for `variant`, from the environment; GCP_CREDENTIALS_MISSING when there is none. */
export async function gcpAccessTokenSource(variant: string, env: NodeJS.ProcessEnv): Promise<AccessTokenSource> {
  const token = env.GOOGLE_OAUTH_ACCESS_TOKEN?.trim();
  if (token) return async () => token;
  const file = env.GOOGLE_APPLICATION_CREDENTIALS || join(env.HOME || homedir(), '.config', 'gcloud', 'application_default_credentials.json');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    if (!missing || env.GOOGLE_APPLICATION_CREDENTIALS) throw credentialsError(variant, `cannot read the credentials file ${file}: ${(err as Error).message}`);
    throw new CliValidatorError(
      'GCP_CREDENTIALS_MISSING',
      `${variant}: the CLI asks the Compute API (getShieldedInstanceIdentity) for each node's attestation key and needs Google credentials: ${GCP_CREDENTIALS_HINT}`,
      { details: { variant } },
    );
  }
  return cachedTokens(grantFrom(variant, file, text));
}

/** One token request: the token and its lifetime in seconds. */
type Grant = (signal?: AbortSignal) => Promise<{ token: string; expiresIn: number }>;

/** The grant a credentials file describes. */
function grantFrom(variant: string, file: string, text: string): Grant {
  let creds: Record<string, unknown>;
  try {
    creds = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw credentialsError(variant, `the credentials file ${file} is not JSON`);
  }
  const field = (name: string): string => {
    const v = creds[name];
    if (typeof v !== 'string' || v === '') throw credentialsError(variant, `the credentials file ${file} has no "${name}"`);
    return v;
  };
  const tokenUri = tokenEndpoint(variant, typeof creds.token_uri === 'string' && creds.token_uri ? creds.token_uri : GOOGLE_TOKEN_URI);
  if (creds.type === 'authorized_user') {
    const form = { grant_type: 'refresh_token', client_id: field('client_id'), client_secret: field('client_secret'), refresh_token: field('refresh_token') };
    return (signal) => requestToken(tokenUri, form, signal);
  }
  if (creds.type === 'service_account') {
    const email = field('client_email');
    let key: KeyObject;
    try {
      key = createPrivateKey(field('private_key'));
    } catch {
      throw credentialsError(variant, `the private_key of ${file} does not parse`);
    }
    return (signal) => requestToken(tokenUri, { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: signedJwt(email, tokenUri, key) }, signal);
  }
  throw credentialsError(variant, `the credentials file ${file} is of type ${JSON.stringify(creds.type ?? null)}; supported: authorized_user, service_account`);
}

/** Token endpoints get refresh tokens and keys' assertions: HTTPS only, plain HTTP on loopback only. */
function tokenEndpoint(variant: string, uri: string): string {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw credentialsError(variant, `token_uri ${JSON.stringify(uri)} is not a URL`);
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) throw credentialsError(variant, `token_uri ${uri} is not https`);
  return url.toString();
}

/** An RS256 JWT asking for a Compute read-only token for a service account (valid 1 hour). */
function signedJwt(email: string, audience: string, key: KeyObject): string {
  const now = Math.floor(Date.now() / 1000);
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const unsigned = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64({ iss: email, scope: COMPUTE_READONLY_SCOPE, aud: audience, iat: now, exp: now + 3600 })}`;
  return `${unsigned}.${sign('sha256', Buffer.from(unsigned), key).toString('base64url')}`;
}

/** POSTs a form to the token endpoint; the answer's `access_token` and `expires_in`. */
async function requestToken(uri: string, form: Record<string, string>, signal?: AbortSignal): Promise<{ token: string; expiresIn: number }> {
  const res = await fetchBounded(
    uri,
    { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() },
    { timeoutMs: 10_000, maxBytes: 64 * 1024 },
    signal,
  );
  // The body of a refusal may echo request fields: only the status is reported.
  if (res.status !== 200) throw new Error(`token endpoint ${uri}: HTTP ${res.status}`);
  let body: { access_token?: unknown; expires_in?: unknown };
  try {
    body = JSON.parse(res.body.toString('utf8')) as typeof body;
  } catch {
    throw new Error(`token endpoint ${uri}: the answer is not JSON`);
  }
  if (typeof body.access_token !== 'string' || body.access_token === '') throw new Error(`token endpoint ${uri}: the answer has no access_token`);
  return { token: body.access_token, expiresIn: typeof body.expires_in === 'number' ? body.expires_in : 60 };
}

/** Reuses a token until a minute before it expires. */
function cachedTokens(grant: Grant): AccessTokenSource {
  let cached: { token: string; until: number } | undefined;
  return async (signal) => {
    if (cached && Date.now() < cached.until) return cached.token;
    const { token, expiresIn } = await grant(signal);
    cached = { token, until: Date.now() + Math.max(0, expiresIn - 60) * 1000 };
    return token;
  };
}

function credentialsError(variant: string, why: string): CliValidatorError {
  return new CliValidatorError('GCP_CREDENTIALS_INVALID', `${variant}: Google credentials: ${why}`, { details: { variant } });
}
