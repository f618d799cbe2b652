import type { BearerApi } from '../http/bearer-api.js';
import { TAG_ROLE, TAG_UID } from '../tags.js';
import { parseRole, type InstanceMetadata } from '../types.js';

/** Lists the cluster's instances (consumer-declared port of {@link AzureMetadata}). */
export interface AzurePeerSource {
  /** Every VM of the scale sets in `resourceGroup` tagged `constellation-uid=<uid>`. */
  scaleSetPeers(subscriptionId: string, resourceGroup: string, uid: string, signal?: AbortSignal): Promise<InstanceMetadata[]>;
}

/** Default ARM endpoint (public cloud). */
export const AZURE_ARM_BASE_URL = 'https://management.azure.com';
const COMPUTE_API = '2024-07-01';
const VMSS_NIC_API = '2018-10-01';

type ArmObject = { id?: string; name?: string; tags?: Record<string, string>; properties?: Record<string, unknown> };
type NicConfig = { properties?: { primary?: boolean; privateIPAddress?: string } };

/** `azure://` + resource ID, the provider ID Kubernetes' Azure cloud provider uses. */
export function azureProviderId(resourceId: string): string {
  return `azure://${resourceId}`;
}

/**
 * {@link AzurePeerSource} on ARM REST (docs/protocol/cloud-metadata.md, "Azure"): scale sets of the
 * resource group → their VMs and their network interfaces, authenticated with the VM's
 * managed-identity token from IMDS. Follows `nextLink` pages (same origin only).
 */
export class AzureArmPeers implements AzurePeerSource {
  constructor(private readonly arm: BearerApi) {}

  private async all(path: string, signal?: AbortSignal): Promise<ArmObject[]> {
    const out: ArmObject[] = [];
    let next: string | undefined = path;
    while (next) {
      const page = await this.arm.get(next, signal);
      if (Array.isArray(page.value)) out.push(...(page.value as ArmObject[]));
      next = typeof page.nextLink === 'string' && page.nextLink ? page.nextLink : undefined;
    }
    return out;
  }

  async scaleSetPeers(subscriptionId: string, resourceGroup: string, uid: string, signal?: AbortSignal): Promise<InstanceMetadata[]> {
    const rg = `/subscriptions/${encodeURIComponent(subscriptionId)}/resourceGroups/${encodeURIComponent(resourceGroup)}`;
    const sets = (await this.all(`${rg}/providers/Microsoft.Compute/virtualMachineScaleSets?api-version=${COMPUTE_API}`, signal)).filter((s) => s.tags?.[TAG_UID] === uid && s.name);
    const out: InstanceMetadata[] = [];
    for (const set of sets) {
      const base = `${rg}/providers/Microsoft.Compute/virtualMachineScaleSets/${encodeURIComponent(set.name!)}`;
      const vms = await this.all(`${base}/virtualMachines?api-version=${COMPUTE_API}`, signal);
      const nics = await this.all(`${base}/networkInterfaces?api-version=${VMSS_NIC_API}`, signal);
      const ipByVm = new Map<string, string>();
      for (const nic of nics) {
        const vmId = (nic.properties?.virtualMachine as { id?: string } | undefined)?.id;
        const configs = (nic.properties?.ipConfigurations ?? []) as NicConfig[];
        const ip = (configs.find((c) => c.properties?.primary) ?? configs[0])?.properties?.privateIPAddress;
        if (vmId && ip) ipByVm.set(vmId.toLowerCase(), ip);
      }
      for (const vm of vms) {
        const os = vm.properties?.osProfile as { computerName?: string } | undefined;
        out.push({
          Name: os?.computerName ?? vm.name ?? '',
          ProviderID: azureProviderId(vm.id ?? ''),
          Role: parseRole(set.tags?.[TAG_ROLE] ?? vm.tags?.[TAG_ROLE]),
          VPCIP: ipByVm.get((vm.id ?? '').toLowerCase()) ?? '',
          SecondaryIPRange: '',
          AliasIPRanges: null,
        });
      }
    }
    return out;
  }
}
