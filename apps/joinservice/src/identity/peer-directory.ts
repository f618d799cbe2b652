import type { MetadataProvider, Role } from '@asterism/metadata';

/** A node as the platform (not the node) describes it. */
export interface DirectoryEntry {
  name: string;
  role: Role;
}

/**
 * Instance name and role by source IP, from the metadata source the joinservice trusts (the qemu
 * metadata API or the local cluster's metadata file): `list()` matched on `VPCIP`. Read per
 * request, so nodes added later are found; an IP listed twice is ambiguous and matches nothing.
 */
export class MetadataPeerDirectory {
  constructor(private readonly metadata: Pick<MetadataProvider, 'list'>) {}

  /** The instance with this VPC IP, or undefined. */
  async lookup(ip: string, signal?: AbortSignal): Promise<DirectoryEntry | undefined> {
    const hits = (await this.metadata.list(signal)).filter((i) => i.VPCIP !== '' && i.VPCIP === ip);
    return hits.length === 1 ? { name: hits[0]!.Name, role: hits[0]!.Role } : undefined;
  }
}
