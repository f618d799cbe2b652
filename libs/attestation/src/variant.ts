/**
 * The identity of an attestation variant (name + certificate-extension OID) and the cloud
 * providers. Which variants exist is not decided here: every variant declares its own identity in
 * its descriptor module (variants/<name>.ts) and the table (variants/table.ts) lists them
 * (docs/protocol/attestation-variants.md, docs/adr/0035-variant-descriptor-table.md).
 */

/** An attestation variant value object: name + OID, compared by OID. Built by descriptors; looked up with `Variant` (variants/table.ts). */
export class VariantId {
  /** Only a descriptor module creates its variant's identity. */
  constructor(
    readonly name: string,
    readonly oid: string,
  ) {}

  /** Same OID. */
  equals(other: VariantId): boolean {
    return this.oid === other.oid;
  }

  toString(): string {
    return this.name;
  }

  toJSON(): string {
    return this.name;
  }
}

/** Cloud providers in the reference's enum order (Unknown=0 ... QEMU=5). */
export const CLOUD_PROVIDERS = ['Unknown', 'AWS', 'Azure', 'GCP', 'OpenStack', 'QEMU'] as const;
/** One of {@link CLOUD_PROVIDERS}. */
export type CloudProvider = (typeof CLOUD_PROVIDERS)[number];

const PROVIDER_NAMES: Readonly<Record<string, CloudProvider>> = { aws: 'AWS', azure: 'Azure', gcp: 'GCP', qemu: 'QEMU', openstack: 'OpenStack', stackit: 'OpenStack' };

/** Case-insensitive provider parsing (`openstack` and `stackit` map to OpenStack). */
export function cloudProviderFromString(s: string): CloudProvider {
  const key = s.toLowerCase();
  return Object.hasOwn(PROVIDER_NAMES, key) ? PROVIDER_NAMES[key]! : 'Unknown';
}
