import { AttestationError } from './errors.js';

/** Every attestation variant of the reference (docs/protocol/attestation-variants.md), with its certificate-extension OID. */
export const VARIANTS = {
  dummy: { oid: '1.3.9900.1.1', provider: 'unknown' },
  'aws-nitro-tpm': { oid: '1.3.9900.2.1', provider: 'aws' },
  'aws-sev-snp': { oid: '1.3.9900.2.2', provider: 'aws' },
  'gcp-sev-es': { oid: '1.3.9900.3.1', provider: 'gcp' },
  'gcp-sev-snp': { oid: '1.3.9900.3.2', provider: 'gcp' },
  'azure-sev-snp': { oid: '1.3.9900.4.1', provider: 'azure' },
  'azure-trustedlaunch': { oid: '1.3.9900.4.2', provider: 'azure' },
  'azure-tdx': { oid: '1.3.9900.4.3', provider: 'azure' },
  'qemu-vtpm': { oid: '1.3.9900.5.1', provider: 'qemu' },
  'qemu-tdx': { oid: '1.3.9900.5.99', provider: 'qemu' },
} as const;

/** A variant name such as `qemu-vtpm`. */
export type VariantName = keyof typeof VARIANTS;

/** Cloud providers in the reference's enum order (Unknown=0 ... QEMU=5). */
export const CLOUD_PROVIDERS = ['Unknown', 'AWS', 'Azure', 'GCP', 'OpenStack', 'QEMU'] as const;
export type CloudProvider = (typeof CLOUD_PROVIDERS)[number];

/** Variants per provider; the first is the provider's default (docs/protocol/attestation-variants.md). */
const PROVIDER_VARIANTS: Record<CloudProvider, VariantName[]> = {
  Unknown: ['dummy'],
  AWS: ['aws-sev-snp', 'aws-nitro-tpm'],
  Azure: ['azure-sev-snp', 'azure-tdx', 'azure-trustedlaunch'],
  GCP: ['gcp-sev-snp', 'gcp-sev-es'],
  OpenStack: ['qemu-vtpm'],
  QEMU: ['qemu-vtpm'],
};

/** An attestation variant value object: name + OID, compared by OID. */
export class Variant {
  private constructor(
    readonly name: VariantName,
    readonly oid: string,
  ) {}

  /** Exact, case-sensitive lookup; unknown names fail with `unknown OID: "<s>"` like the reference. */
  static fromString(name: string): Variant {
    if (!Object.hasOwn(VARIANTS, name)) {
      throw new AttestationError('VARIANT_UNKNOWN', `unknown OID: ${JSON.stringify(name)}`, { details: { variant: name } });
    }
    const v = name as VariantName;
    return new Variant(v, VARIANTS[v].oid);
  }

  /** Lookup by dotted OID. */
  static fromOid(oid: string): Variant {
    const hit = (Object.keys(VARIANTS) as VariantName[]).find((n) => VARIANTS[n].oid === oid);
    if (!hit) throw new AttestationError('VARIANT_UNKNOWN', `unknown attestation variant OID ${oid}`, { details: { oid } });
    return new Variant(hit, VARIANTS[hit].oid);
  }

  /** All known variants. */
  static all(): Variant[] {
    return (Object.keys(VARIANTS) as VariantName[]).map((n) => new Variant(n, VARIANTS[n].oid));
  }

  /** Same OID. */
  equals(other: Variant): boolean {
    return this.oid === other.oid;
  }

  toString(): string {
    return this.name;
  }

  toJSON(): string {
    return this.name;
  }
}

/** Case-insensitive provider parsing (`openstack` and `stackit` map to OpenStack). */
export function cloudProviderFromString(s: string): CloudProvider {
  switch (s.toLowerCase()) {
    case 'aws':
      return 'AWS';
    case 'azure':
      return 'Azure';
    case 'gcp':
      return 'GCP';
    case 'qemu':
      return 'QEMU';
    case 'openstack':
    case 'stackit':
      return 'OpenStack';
    default:
      return 'Unknown';
  }
}

/** The variants a provider supports; the first one is its default. */
export function variantsForProvider(provider: CloudProvider): Variant[] {
  return PROVIDER_VARIANTS[provider].map((n) => Variant.fromString(n));
}
