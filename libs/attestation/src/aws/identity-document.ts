/**
 * The EC2 instance identity document as the aws-nitro-tpm instance info carries it
 * (docs/protocol/cloud-vtpm-variants.md §3.1): IMDSv2 serves it at
 * `/latest/dynamic/instance-identity/document`; the issuer re-encodes it as Go JSON in the
 * reference's field order, and the validator reads `imageId` and `region` from it.
 */
import { AttestationError } from '../errors.js';
import { goField, parseGoJsonObject } from '../go-json.js';
import { fetchBounded, type BoundedFetchOptions } from '../cloud/http.js';

/** The instance identity document (string fields may be empty, lists may be null). */
export interface InstanceIdentityDocument {
  readonly devpayProductCodes: string[] | null;
  readonly marketplaceProductCodes: string[] | null;
  readonly availabilityZone: string;
  readonly privateIp: string;
  readonly version: string;
  readonly region: string;
  readonly instanceId: string;
  readonly billingProducts: string[] | null;
  readonly instanceType: string;
  readonly accountId: string;
  /** RFC 3339. */
  readonly pendingTime: string;
  readonly imageId: string;
  readonly kernelId: string;
  readonly ramdiskId: string;
  readonly architecture: string;
}

const LISTS = ['devpayProductCodes', 'marketplaceProductCodes', 'billingProducts'] as const;
const STRINGS = ['availabilityZone', 'privateIp', 'version', 'region', 'instanceId', 'instanceType', 'accountId', 'pendingTime', 'imageId', 'kernelId', 'ramdiskId', 'architecture'] as const;
/** Go struct field order of the reference's document type. */
const ORDER = [
  'devpayProductCodes',
  'marketplaceProductCodes',
  'availabilityZone',
  'privateIp',
  'version',
  'region',
  'instanceId',
  'billingProducts',
  'instanceType',
  'accountId',
  'pendingTime',
  'imageId',
  'kernelId',
  'ramdiskId',
  'architecture',
] as const;

const malformed = (field: string, why: string) => new AttestationError('DOCUMENT_MALFORMED', `instance identity document: field ${field}: ${why}`, { details: { field } });

/** Parses an identity document (IMDS answer or instance info); keys match case-insensitively. */
export function parseIdentityDocument(bytes: Uint8Array | string): InstanceIdentityDocument {
  const obj = parseGoJsonObject(bytes, 'instance identity document');
  const out: Record<string, unknown> = {};
  for (const k of LISTS) {
    const v = goField(obj, k) ?? null;
    if (v !== null && (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))) throw malformed(k, 'want a list of strings');
    out[k] = v;
  }
  for (const k of STRINGS) {
    const v = goField(obj, k) ?? '';
    if (typeof v !== 'string') throw malformed(k, 'want a string');
    out[k] = v;
  }
  if (out.pendingTime !== '' && Number.isNaN(Date.parse(out.pendingTime as string))) throw malformed('pendingTime', 'not an RFC 3339 time');
  return out as unknown as InstanceIdentityDocument;
}

/** Go JSON of the document, fields in the reference's order. */
export function encodeIdentityDocument(doc: InstanceIdentityDocument): Buffer {
  const fields = ORDER.map((k) => `${JSON.stringify(k)}:${JSON.stringify(doc[k] ?? null)}`);
  return Buffer.from(`{${fields.join(',')}}`);
}

/** Where the issuer gets the identity document from. */
export interface InstanceIdentitySource {
  identityDocument(signal?: AbortSignal): Promise<InstanceIdentityDocument>;
}

/** The EC2 instance metadata service (link-local). */
export const AWS_IMDS_BASE_URL = 'http://169.254.169.254';

/** IMDSv2: a session token (PUT, 6 h TTL), then the document with that token. */
export class ImdsIdentitySource implements InstanceIdentitySource {
  constructor(
    private readonly baseUrl = AWS_IMDS_BASE_URL,
    private readonly http: BoundedFetchOptions = { timeoutMs: 5_000, maxBytes: 64 * 1024 },
  ) {}

  async identityDocument(signal?: AbortSignal): Promise<InstanceIdentityDocument> {
    const where = `${this.baseUrl}/latest/api/token`;
    const token = await fetchBounded(where, { method: 'PUT', headers: { 'X-aws-ec2-metadata-token-ttl-seconds': '21600' } }, this.http, signal).catch((err: unknown) => {
      throw new Error(`not on AWS: IMDS not reachable at ${this.baseUrl}: ${(err as Error).message}`, { cause: err });
    });
    if (token.status !== 200) throw new Error(`IMDS session token: HTTP ${token.status}`);
    const res = await fetchBounded(`${this.baseUrl}/latest/dynamic/instance-identity/document`, { headers: { 'X-aws-ec2-metadata-token': token.body.toString('utf8') } }, this.http, signal);
    if (res.status !== 200) throw new Error(`IMDS instance identity document: HTTP ${res.status}`);
    return parseIdentityDocument(res.body);
  }
}
