/**
 * GCE instance identity for gcp-sev-es (docs/protocol/cloud-vtpm-variants.md §4): the instance
 * info `{zone, project_id, instance_name}` the issuer reads from the metadata server, and the
 * Compute API `instances.getShieldedInstanceIdentity` the validator asks for the instance's
 * vTPM signing key. Both are consumer-declared ports with HTTP implementations.
 */
import { AttestationError } from '../errors.js';
import { goField, parseGoJsonObject } from '../go-json.js';
import { fetchBounded, type BoundedFetchOptions } from '../cloud/http.js';

/** Which GCE instance a document claims to come from. */
export interface GceInstanceInfo {
  readonly zone: string;
  readonly projectId: string;
  readonly instanceName: string;
}

/** Go JSON of go-tpm-tools' GCEInstanceInfo (snake_case, empty fields omitted). */
export function encodeGceInstanceInfo(info: GceInstanceInfo): Buffer {
  const o: Record<string, string> = {};
  if (info.zone) o.zone = info.zone;
  if (info.projectId) o.project_id = info.projectId;
  if (info.instanceName) o.instance_name = info.instanceName;
  return Buffer.from(JSON.stringify(o));
}

/** GCE resource names that may be put into an API path (project ids may be domain-scoped). */
const NAME = /^[a-z][a-z0-9.:-]{0,99}$/;

/** Decodes the instance info; DOCUMENT_MALFORMED unless all three names are present and well-formed. */
export function decodeGceInstanceInfo(bytes: Uint8Array | null): GceInstanceInfo {
  if (!bytes || bytes.length === 0) throw new AttestationError('DOCUMENT_MALFORMED', 'gcp-sev-es document has no GCE instance info', { details: { field: 'InstanceInfo' } });
  const obj = parseGoJsonObject(bytes, 'GCE instance info');
  const name = (key: string): string => {
    const v = goField(obj, key);
    if (typeof v !== 'string' || !NAME.test(v)) throw new AttestationError('DOCUMENT_MALFORMED', `GCE instance info: ${key} ${JSON.stringify(v ?? null)} is not a GCE name`, { details: { field: key } });
    return v;
  };
  return { zone: name('zone'), projectId: name('project_id'), instanceName: name('instance_name') };
}

/** Where the issuer learns its own instance's names. */
export interface GceInstanceSource {
  instanceInfo(signal?: AbortSignal): Promise<GceInstanceInfo>;
}

/** The GCE metadata server (link-local). */
export const GCE_METADATA_BASE_URL = 'http://169.254.169.254';

/** Reads one metadata value (header `Metadata-Flavor: Google`). */
async function metadataValue(baseUrl: string, path: string, http: BoundedFetchOptions, signal?: AbortSignal): Promise<string> {
  const url = `${baseUrl}/computeMetadata/v1/${path}`;
  const res = await fetchBounded(url, { headers: { 'Metadata-Flavor': 'Google' } }, http, signal).catch((err: unknown) => {
    throw new Error(`not on GCE: metadata server not reachable at ${baseUrl}: ${(err as Error).message}`, { cause: err });
  });
  if (res.status !== 200) throw new Error(`GCE metadata ${path}: HTTP ${res.status}`);
  return res.body.toString('utf8').trim();
}

/** {@link GceInstanceSource} over the metadata server. */
export class GceMetadataInstanceSource implements GceInstanceSource {
  constructor(
    private readonly baseUrl = GCE_METADATA_BASE_URL,
    private readonly http: BoundedFetchOptions = { timeoutMs: 5_000, maxBytes: 64 * 1024 },
  ) {}

  async instanceInfo(signal?: AbortSignal): Promise<GceInstanceInfo> {
    const projectId = await metadataValue(this.baseUrl, 'project/project-id', this.http, signal);
    // The zone is answered as projects/<number>/zones/<zone>.
    const zone = (await metadataValue(this.baseUrl, 'instance/zone', this.http, signal)).split('/').pop() ?? '';
    const instanceName = await metadataValue(this.baseUrl, 'instance/name', this.http, signal);
    if (!projectId || !zone || !instanceName) throw new Error('GCE metadata: empty project id, zone or instance name');
    return { zone, projectId, instanceName };
  }
}

/** Answers instances.getShieldedInstanceIdentity: the PEM of `signingKey.ekPub`. */
export interface ShieldedIdentitySource {
  signingKeyPem(instance: GceInstanceInfo, signal?: AbortSignal): Promise<string>;
}

/** Returns an OAuth2 access token for the Compute API. */
export type AccessTokenSource = (signal?: AbortSignal) => Promise<string>;

/** Access tokens of the instance's service account from the metadata server, cached until shortly before expiry. */
export function metadataAccessToken(baseUrl = GCE_METADATA_BASE_URL, http: BoundedFetchOptions = { timeoutMs: 5_000 }): AccessTokenSource {
  let cached: { token: string; until: number } | undefined;
  return async (signal) => {
    if (cached && Date.now() < cached.until) return cached.token;
    const body = JSON.parse(await metadataValue(baseUrl, 'instance/service-accounts/default/token', http, signal)) as { access_token?: unknown; expires_in?: unknown };
    if (typeof body.access_token !== 'string') throw new Error('GCE metadata token: no access_token');
    const ttl = typeof body.expires_in === 'number' ? body.expires_in : 60;
    cached = { token: body.access_token, until: Date.now() + Math.max(0, ttl - 60) * 1000 };
    return cached.token;
  };
}

/** The public Compute API base (v1). */
export const GCE_COMPUTE_API_BASE_URL = 'https://compute.googleapis.com/compute/v1';

/** {@link ShieldedIdentitySource} over the Compute REST API with a bearer token. */
export class ComputeShieldedIdentitySource implements ShieldedIdentitySource {
  constructor(
    private readonly token: AccessTokenSource,
    private readonly baseUrl = GCE_COMPUTE_API_BASE_URL,
    private readonly http: BoundedFetchOptions = { timeoutMs: 10_000, maxBytes: 256 * 1024 },
  ) {}

  async signingKeyPem(instance: GceInstanceInfo, signal?: AbortSignal): Promise<string> {
    const seg = encodeURIComponent;
    const url = `${this.baseUrl}/projects/${seg(instance.projectId)}/zones/${seg(instance.zone)}/instances/${seg(instance.instanceName)}/getShieldedInstanceIdentity`;
    const res = await fetchBounded(url, { headers: { Authorization: `Bearer ${await this.token(signal)}` } }, this.http, signal);
    if (res.status !== 200) throw new Error(`getShieldedInstanceIdentity: HTTP ${res.status}`);
    const body = parseGoJsonObject(res.body, 'shielded instance identity');
    const signingKey = goField(body, 'signingKey') as Record<string, unknown> | null | undefined;
    const ekPub = signingKey && typeof signingKey === 'object' ? goField(signingKey, 'ekPub') : undefined;
    if (typeof ekPub !== 'string' || ekPub === '') {
      throw new AttestationError('AK_UNTRUSTED', `the shielded instance identity of ${instance.instanceName} has no signing key`, { details: { field: 'signingKey.ekPub' } });
    }
    return ekPub;
  }
}
