/**
 * The one table of attestation variants (docs/adr/0035-variant-descriptor-table.md). Every
 * question about a variant — its OID, its config, its defaults, its issuer, its validator and the
 * sources that validator needs — is answered by its descriptor found here; the bootstrapper, the
 * CLI, the joinservice and the chart schemas iterate this table instead of switching on names.
 *
 * The table is the process's set of variants: the built-in descriptors, plus any a test (or a
 * future plug-in) registers with {@link registerVariant}.
 */
import { AttestationError } from '../errors.js';
import type { CloudProvider, VariantId } from '../variant.js';
import { awsNitroTpmVariant } from './aws-nitro-tpm.js';
import { awsSevSnpVariant } from './aws-sev-snp.js';
import { azureSevSnpVariant } from './azure-sev-snp.js';
import { azureTdxVariant } from './azure-tdx.js';
import { azureTrustedLaunchVariant } from './azure-trustedlaunch.js';
import type { VariantDescriptor } from './descriptor.js';
import { dummyVariant } from './dummy.js';
import { gcpSevEsVariant } from './gcp-sev-es.js';
import { gcpSevSnpVariant } from './gcp-sev-snp.js';
import { qemuTdxVariant } from './qemu-tdx.js';
import { qemuVtpmVariant } from './qemu-vtpm.js';

/** The built-in variants, in the reference's order (docs/protocol/attestation-variants.md). */
const BUILT_IN: readonly VariantDescriptor[] = [
  dummyVariant,
  awsNitroTpmVariant,
  awsSevSnpVariant,
  gcpSevEsVariant,
  gcpSevSnpVariant,
  azureSevSnpVariant,
  azureTrustedLaunchVariant,
  azureTdxVariant,
  qemuVtpmVariant,
  qemuTdxVariant,
];

const table: VariantDescriptor[] = [...BUILT_IN];

/**
 * Adds a variant to this process's table (tests, plug-ins); returns the function that removes it
 * again. A name or OID already in the table is refused.
 */
export function registerVariant(descriptor: VariantDescriptor): () => void {
  const clash = table.find((d) => d.variant.name === descriptor.variant.name || d.variant.oid === descriptor.variant.oid);
  if (clash) throw new AttestationError('CONFIG_INVALID', `variant ${descriptor.variant.name} (${descriptor.variant.oid}) clashes with ${clash.variant.name} (${clash.variant.oid})`, { details: { variant: descriptor.variant.name } });
  table.push(descriptor);
  return () => {
    const i = table.indexOf(descriptor);
    if (i >= 0) table.splice(i, 1);
  };
}

/** Every variant of this process, built-in ones first in the reference's order. */
export function variantDescriptors(): readonly VariantDescriptor[] {
  return [...table];
}

/** The descriptor of `variant` (exact, case-sensitive name); unknown names fail with `unknown OID: "<s>"` like the reference. */
export function variantDescriptor(variant: VariantId | string): VariantDescriptor {
  const name = typeof variant === 'string' ? variant : variant.name;
  const hit = table.find((d) => d.variant.name === name);
  if (!hit) throw new AttestationError('VARIANT_UNKNOWN', `unknown OID: ${JSON.stringify(name)}`, { details: { variant: name } });
  return hit;
}

/** Variant lookups over the table: by name, by OID, all. */
export const Variant = {
  /** Exact, case-sensitive lookup; unknown names fail with `unknown OID: "<s>"` like the reference. */
  fromString(name: string): VariantId {
    return variantDescriptor(name).variant;
  },
  /** Lookup by dotted OID. */
  fromOid(oid: string): VariantId {
    const hit = table.find((d) => d.variant.oid === oid);
    if (!hit) throw new AttestationError('VARIANT_UNKNOWN', `unknown attestation variant OID ${oid}`, { details: { oid } });
    return hit.variant;
  },
  /** All known variants. */
  all(): VariantId[] {
    return table.map((d) => d.variant);
  },
};
/** An attestation variant: name + OID, compared by OID. */
export type Variant = VariantId;

/** The variants a provider offers; the first one is its default. */
export function variantsForProvider(provider: CloudProvider): VariantId[] {
  return table
    .filter((d) => d.offeredBy[provider] !== undefined)
    .sort((a, b) => a.offeredBy[provider]! - b.offeredBy[provider]!)
    .map((d) => d.variant);
}
