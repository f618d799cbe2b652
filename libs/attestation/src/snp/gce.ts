/**
 * GCE pieces of gcp-sev-snp (docs/protocol/sev-snp.md §7-§8): the instance identity from the
 * metadata server (issuer), and the shielded-instance signing key from the Compute API, which is
 * how the validator trusts the AK (an injected source; the default asks the Compute API with a
 * token from the metadata server of the joinservice's own VM).
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { AttestationError } from '../errors.js';
import { goField, parseGoJsonObject } from '../go-json.js';
import type { GceInstanceInfo } from './instance-info.js';

/** Default GCE metadata server and Compute API. */
export const GCE_METADATA_BASE_URL = 'http://metadata.google.internal';
export const GCE_COMPUTE_BASE_URL = 'https://compute.googleapis.com';

/** The instance identity of this VM (issuer side). */
export interface GceInstanceInfoSource {
  instanceInfo(signal?: AbortSignal): Promise<GceInstanceInfo>;
}

/** Trusted AK of a named GCE instance (validator side). */
export interface GceShieldedIdentitySource {
  /** The instance's shielded-VM signing key (its vTPM attestation key). */
  signingKey(instance: GceInstanceInfo, signal?: AbortSignal): Promise<KeyObject>;
}

async function getText(url: string, headers: Record<string, string>, signal: AbortSignal | undefined, fetchImpl: typeof fetch, what: string): Promise<string> {
  let res: Response;
  try {
    res = await fetchImpl(url, { headers, signal: signal ?? AbortSignal.timeout(30_000) });
  } catch (err) {
    throw new Error(`${what}: GET ${url}: ${(err as Error).message}`);
  }
  if (!res.ok) throw new Error(`${what}: GET ${url}: HTTP ${res.status}`);
  return res.text();
}

/** The metadata server of this GCE VM. */
export class GceMetadataClient implements GceInstanceInfoSource {
  constructor(
    private readonly baseUrl = GCE_METADATA_BASE_URL,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  private get(path: string, what: string, signal?: AbortSignal): Promise<string> {
    return getText(`${this.baseUrl.replace(/\/$/, '')}/computeMetadata/v1/${path}`, { 'Metadata-Flavor': 'Google' }, signal, this.fetchImpl, what);
  }

  async instanceInfo(signal?: AbortSignal): Promise<GceInstanceInfo> {
    try {
      const projectId = (await this.get('project/project-id', 'unable to fetch projectID', signal)).trim();
      const zone = (await this.get('instance/zone', 'unable to fetch zone', signal)).trim().split('/').pop() ?? '';
      const instanceName = (await this.get('instance/name', 'unable to fetch instance name', signal)).trim();
      return { projectId, zone, instanceName, projectNumber: 0n, instanceId: 0n };
    } catch (err) {
      throw new AttestationError('ISSUER_FAILED', `fetching GCE instance info: ${(err as Error).message}`, { details: { step: 'fetching instance info' }, cause: err });
    }
  }

  /** An OAuth access token of the VM's default service account. */
  async accessToken(signal?: AbortSignal): Promise<string> {
    const body = parseGoJsonObject(await this.get('instance/service-accounts/default/token', 'fetching access token', signal), 'token answer');
    const token = goField(body, 'access_token');
    if (typeof token !== 'string' || token === '') throw new Error('metadata token answer has no access_token');
    return token;
  }
}

const NAME = /^[a-z0-9]([-a-z0-9.:]{0,126}[a-z0-9])?$/i;

/** The Compute API's getShieldedInstanceIdentity, authorised by a token source. */
export class GceComputeShieldedIdentity implements GceShieldedIdentitySource {
  constructor(
    private readonly token: (signal?: AbortSignal) => Promise<string>,
    private readonly baseUrl = GCE_COMPUTE_BASE_URL,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  async signingKey(instance: GceInstanceInfo, signal?: AbortSignal): Promise<KeyObject> {
    const untrusted = (why: string) => new AttestationError('AK_UNTRUSTED', `getting the GCE shielded identity of ${instance.projectId}/${instance.zone}/${instance.instanceName}: ${why}`, {
      details: { project: instance.projectId, zone: instance.zone, instance: instance.instanceName },
    });
    for (const [field, v] of [
      ['project_id', instance.projectId],
      ['zone', instance.zone],
      ['instance_name', instance.instanceName],
    ] as const) {
      if (!NAME.test(v)) throw untrusted(`invalid ${field} ${JSON.stringify(v)}`);
    }
    const url = `${this.baseUrl.replace(/\/$/, '')}/compute/v1/projects/${instance.projectId}/zones/${instance.zone}/instances/${instance.instanceName}/getShieldedInstanceIdentity`;
    let text: string;
    try {
      text = await getText(url, { Authorization: `Bearer ${await this.token(signal)}` }, signal, this.fetchImpl, 'shielded identity');
    } catch (err) {
      throw untrusted((err as Error).message);
    }
    const signing = goField(parseGoJsonObject(text, 'shielded identity'), 'signingKey');
    const pem = signing && typeof signing === 'object' ? goField(signing as Record<string, unknown>, 'ekPub') : undefined;
    if (typeof pem !== 'string' || !pem.includes('-----BEGIN PUBLIC KEY-----')) throw untrusted('the answer has no signingKey.ekPub PUBLIC KEY');
    try {
      return createPublicKey(pem);
    } catch (err) {
      throw untrusted(`signingKey.ekPub does not parse: ${(err as Error).message}`);
    }
  }
}
