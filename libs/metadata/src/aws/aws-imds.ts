import { MetadataHttp, type RetryPolicy } from '../http/metadata-http.js';
import { MetadataError } from '../types.js';

/** Base URL of the EC2 instance metadata service (docs/protocol/cloud-metadata.md, "AWS"). */
export const AWS_IMDS_BASE_URL = 'http://169.254.169.254';

/** Lifetime requested for an IMDSv2 session token (the maximum, six hours). */
const TOKEN_TTL_SECONDS = 21_600;

/** The fields of the instance identity document a node needs. */
export interface AwsIdentityDocument {
  instanceId: string;
  region: string;
  availabilityZone: string;
  privateIp: string;
  imageId: string;
  accountId: string;
}

/**
 * IMDSv2 client: `PUT /latest/api/token` gives a session token that every GET carries in
 * `X-aws-ec2-metadata-token`. The token is cached until shortly before it expires and fetched
 * again once when IMDS answers 401 (token expired or revoked).
 */
export class AwsImds {
  private readonly http: MetadataHttp;
  private token: { value: string; until: number } | undefined;

  constructor(
    baseUrl: string = AWS_IMDS_BASE_URL,
    policy?: Partial<RetryPolicy>,
    private readonly now: () => number = Date.now,
  ) {
    this.http = new MetadataHttp({ baseUrl, cloud: 'AWS', service: 'IMDS', ...(policy ? { policy } : {}) });
  }

  private async sessionToken(signal?: AbortSignal): Promise<string> {
    if (this.token && this.token.until > this.now()) return this.token.value;
    const value = (await this.http.request('/latest/api/token', { method: 'PUT', headers: { 'X-aws-ec2-metadata-token-ttl-seconds': String(TOKEN_TTL_SECONDS) }, signal })).body.trim();
    if (!value) throw new MetadataError('METADATA_MALFORMED', 'AWS IMDS returned an empty session token');
    this.token = { value, until: this.now() + (TOKEN_TTL_SECONDS - 60) * 1000 };
    return value;
  }

  /** GET of an IMDS path with the session token; a 401 refreshes the token once. */
  async get(path: string, signal?: AbortSignal): Promise<string> {
    try {
      return await this.http.text(path, { headers: { 'X-aws-ec2-metadata-token': await this.sessionToken(signal) }, signal });
    } catch (err) {
      if (!(err instanceof MetadataError) || err.details.status !== 401) throw err;
      this.token = undefined;
      return this.http.text(path, { headers: { 'X-aws-ec2-metadata-token': await this.sessionToken(signal) }, signal });
    }
  }

  /** The instance identity document (`/latest/dynamic/instance-identity/document`). */
  async identity(signal?: AbortSignal): Promise<AwsIdentityDocument> {
    const path = '/latest/dynamic/instance-identity/document';
    let raw: unknown;
    try {
      raw = JSON.parse(await this.get(path, signal));
    } catch (err) {
      if (err instanceof MetadataError) throw err;
      throw new MetadataError('METADATA_MALFORMED', `AWS IMDS ${path}: not JSON`);
    }
    const o = (raw ?? {}) as Record<string, unknown>;
    const field = (k: keyof AwsIdentityDocument) => {
      const v = o[k];
      if (typeof v !== 'string' || v === '') throw new MetadataError('METADATA_MALFORMED', `AWS IMDS ${path}: field ${k} missing`, { details: { field: k } });
      return v;
    };
    return { instanceId: field('instanceId'), region: field('region'), availabilityZone: field('availabilityZone'), privateIp: field('privateIp'), imageId: field('imageId'), accountId: field('accountId') };
  }

  /** An instance tag (`/latest/meta-data/tags/instance/<key>`); undefined when the tag is absent. */
  async tag(key: string, signal?: AbortSignal): Promise<string | undefined> {
    try {
      return await this.get(`/latest/meta-data/tags/instance/${encodeURIComponent(key)}`, signal);
    } catch (err) {
      if (err instanceof MetadataError && err.code === 'METADATA_NOT_FOUND') return undefined;
      throw err;
    }
  }
}
