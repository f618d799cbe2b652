import { parseTokenResponse, type AccessToken } from '../http/bearer-api.js';
import { MetadataHttp, type RetryPolicy } from '../http/metadata-http.js';
import { MetadataError } from '../types.js';

/** Base URL of the Azure instance metadata service (docs/protocol/cloud-metadata.md, "Azure"). */
export const AZURE_IMDS_BASE_URL = 'http://169.254.169.254';
/** ARM audience of managed-identity tokens. */
export const AZURE_ARM_RESOURCE = 'https://management.azure.com/';

/** The parts of IMDS `/metadata/instance` a node needs. */
export interface AzureInstance {
  name: string;
  computerName: string;
  resourceId: string;
  subscriptionId: string;
  resourceGroupName: string;
  vmScaleSetName: string;
  tags: Record<string, string>;
  privateIp: string;
}

function str(o: Record<string, unknown> | undefined, key: string, where: string, required = true): string {
  const v = o?.[key];
  if (typeof v === 'string' && (v !== '' || !required)) return v;
  if (!required && v === undefined) return '';
  throw new MetadataError('METADATA_MALFORMED', `Azure IMDS ${where}: field ${key} missing`, { details: { field: key } });
}

function firstPrivateIp(network: unknown): string {
  const ifaces = (network as { interface?: { ipv4?: { ipAddress?: { privateIpAddress?: unknown }[] } }[] } | undefined)?.interface;
  const ip = ifaces?.[0]?.ipv4?.ipAddress?.[0]?.privateIpAddress;
  if (typeof ip !== 'string' || ip === '') throw new MetadataError('METADATA_MALFORMED', 'Azure IMDS instance: network.interface[0] has no private IPv4 address');
  return ip;
}

/** Parses the `/metadata/instance` document. */
export function parseAzureInstance(raw: unknown): AzureInstance {
  const o = (raw ?? {}) as { compute?: Record<string, unknown>; network?: unknown };
  const c = o.compute;
  if (!c || typeof c !== 'object') throw new MetadataError('METADATA_MALFORMED', 'Azure IMDS instance: no compute section');
  const tags: Record<string, string> = {};
  const list = c.tagsList;
  if (list !== undefined && !Array.isArray(list)) throw new MetadataError('METADATA_MALFORMED', 'Azure IMDS instance: tagsList must be a list');
  for (const t of (list ?? []) as { name?: unknown; value?: unknown }[]) if (typeof t?.name === 'string' && typeof t.value === 'string') tags[t.name] = t.value;
  const name = str(c, 'name', 'compute');
  const os = c.osProfile as Record<string, unknown> | undefined;
  return {
    name,
    computerName: (typeof os?.computerName === 'string' && os.computerName) || name,
    resourceId: str(c, 'resourceId', 'compute'),
    subscriptionId: str(c, 'subscriptionId', 'compute'),
    resourceGroupName: str(c, 'resourceGroupName', 'compute'),
    vmScaleSetName: str(c, 'vmScaleSetName', 'compute', false),
    tags,
    privateIp: firstPrivateIp(o.network),
  };
}

/** Azure IMDS client; every request carries `Metadata: true` (IMDS refuses requests without it). */
export class AzureImds {
  private readonly http: MetadataHttp;

  constructor(baseUrl: string = AZURE_IMDS_BASE_URL, policy?: Partial<RetryPolicy>) {
    this.http = new MetadataHttp({ baseUrl, cloud: 'Azure', service: 'IMDS', headers: { Metadata: 'true' }, ...(policy ? { policy } : {}) });
  }

  get baseUrl(): string {
    return this.http.baseUrl;
  }

  async instance(signal?: AbortSignal): Promise<AzureInstance> {
    return parseAzureInstance(await this.http.json('/metadata/instance?api-version=2021-02-01', { signal }));
  }

  /** Public frontend IPs of the standard load balancer in front of this VM (`/metadata/loadbalancer`). */
  async loadBalancerFrontends(signal?: AbortSignal): Promise<string[]> {
    const raw = (await this.http.json('/metadata/loadbalancer?api-version=2020-10-01', { signal })) as { loadbalancer?: { publicIpAddresses?: { frontendIpAddress?: unknown }[] } };
    return (raw?.loadbalancer?.publicIpAddresses ?? []).map((p) => p.frontendIpAddress).filter((ip): ip is string => typeof ip === 'string' && ip !== '');
  }

  /** A managed-identity access token for `resource` (ARM by default). */
  async accessToken(resource: string = AZURE_ARM_RESOURCE, signal?: AbortSignal): Promise<AccessToken> {
    const path = `/metadata/identity/oauth2/token?api-version=2018-02-01&resource=${encodeURIComponent(resource)}`;
    return parseTokenResponse(await this.http.json(path, { signal }), 'Azure IMDS', Date.now());
  }
}
