import type { BearerApi } from '../http/bearer-api.js';
import { TAG_ROLE, TAG_UID } from '../tags.js';
import { MetadataError, parseRole, type InstanceMetadata } from '../types.js';

/** Compute Engine calls of the GCP provider (consumer-declared port of {@link GcpMetadata}). */
export interface GcpComputeApi {
  /** Labels of one instance. */
  labels(project: string, zone: string, name: string, signal?: AbortSignal): Promise<Record<string, string>>;
  /** Every instance of the project labelled `constellation-uid=<uid>`, in all zones. */
  instancesByUid(project: string, uid: string, signal?: AbortSignal): Promise<InstanceMetadata[]>;
  /** Address of the forwarding rule labelled `constellation-uid=<uid>` (regional first, then global). */
  forwardingRuleAddress(project: string, region: string, uid: string, signal?: AbortSignal): Promise<string>;
}

/** Default Compute Engine API endpoint. */
export const GCP_COMPUTE_BASE_URL = 'https://compute.googleapis.com';

/** `gce://<project>/<zone>/<name>`, the provider ID Kubernetes' GCE cloud provider uses. */
export function gcpProviderId(project: string, zone: string, name: string): string {
  return `gce://${project}/${zone}/${name}`;
}

type GceInstance = { name?: string; zone?: string; labels?: Record<string, string>; networkInterfaces?: { networkIP?: string; aliasIpRanges?: { ipCidrRange?: string }[] }[] };

function toInstance(project: string, i: GceInstance): InstanceMetadata {
  const zone = (i.zone ?? '').split('/').pop() ?? '';
  const nic = i.networkInterfaces?.[0];
  const aliases = (nic?.aliasIpRanges ?? []).map((a) => a.ipCidrRange).filter((r): r is string => typeof r === 'string');
  return {
    Name: i.name ?? '',
    ProviderID: gcpProviderId(project, zone, i.name ?? ''),
    Role: parseRole(i.labels?.[TAG_ROLE]),
    VPCIP: nic?.networkIP ?? '',
    SecondaryIPRange: '',
    AliasIPRanges: aliases,
  };
}

/**
 * {@link GcpComputeApi} on the Compute Engine REST API v1 (docs/protocol/cloud-metadata.md, "GCP"),
 * authenticated with the instance's service-account token from the metadata server; follows
 * `nextPageToken`.
 */
export class GcpComputeRest implements GcpComputeApi {
  constructor(private readonly api: BearerApi) {}

  private static p(s: string): string {
    return encodeURIComponent(s);
  }

  async labels(project: string, zone: string, name: string, signal?: AbortSignal): Promise<Record<string, string>> {
    const i = (await this.api.get(`/compute/v1/projects/${GcpComputeRest.p(project)}/zones/${GcpComputeRest.p(zone)}/instances/${GcpComputeRest.p(name)}`, signal)) as GceInstance;
    return i.labels ?? {};
  }

  private async pages(path: string, signal?: AbortSignal): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    let token: string | undefined;
    do {
      const page = await this.api.get(token ? `${path}&pageToken=${encodeURIComponent(token)}` : path, signal);
      out.push(page);
      token = typeof page.nextPageToken === 'string' && page.nextPageToken ? page.nextPageToken : undefined;
    } while (token);
    return out;
  }

  async instancesByUid(project: string, uid: string, signal?: AbortSignal): Promise<InstanceMetadata[]> {
    const filter = encodeURIComponent(`labels.${TAG_UID}=${uid}`);
    const out: InstanceMetadata[] = [];
    for (const page of await this.pages(`/compute/v1/projects/${GcpComputeRest.p(project)}/aggregated/instances?filter=${filter}`, signal)) {
      for (const scope of Object.values((page.items ?? {}) as Record<string, { instances?: GceInstance[] }>)) {
        for (const i of scope.instances ?? []) if (i.labels?.[TAG_UID] === uid) out.push(toInstance(project, i));
      }
    }
    return out;
  }

  async forwardingRuleAddress(project: string, region: string, uid: string, signal?: AbortSignal): Promise<string> {
    const filter = encodeURIComponent(`labels.${TAG_UID}=${uid}`);
    for (const scope of [`regions/${GcpComputeRest.p(region)}`, 'global']) {
      for (const page of await this.pages(`/compute/v1/projects/${GcpComputeRest.p(project)}/${scope}/forwardingRules?filter=${filter}`, signal)) {
        const hit = ((page.items ?? []) as { IPAddress?: string; labels?: Record<string, string> }[]).find((r) => r.labels?.[TAG_UID] === uid && r.IPAddress);
        if (hit) return hit.IPAddress!;
      }
    }
    throw new MetadataError('METADATA_NOT_FOUND', `GCP: no forwarding rule labelled ${TAG_UID}=${uid} in ${region} or global`, { details: { region, uid } });
  }
}
