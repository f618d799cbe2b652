/**
 * Building a validator: the variant's descriptor (variants/table.ts) decides, from the decoded
 * attestation config and the dependencies its sources name.
 */
import { unmarshalAttestationConfig } from './attestation-config.js';
import type { AttestationConfig } from './config/types.js';
import { NOP_ATTESTATION_LOGGER, type AttestationLogger, type Validator } from './interfaces.js';
import type { VariantId } from './variant.js';
import type { ValidatorDependencies } from './variants/descriptor.js';
import { variantDescriptor, variantDescriptors } from './variants/table.js';

export type { ValidatorConstructor, ValidatorDependencies } from './variants/descriptor.js';

/** Variants with a validator in this process (every variant of the table). */
export function validatorVariants(): string[] {
  return variantDescriptors()
    .map((d) => d.variant.name)
    .sort();
}

/**
 * The validator for a decoded config; CONFIG_INVALID when the variant needs a source `deps` lacks
 * (e.g. the TDX variants without `deps.tdx`).
 */
export function validatorFor(config: AttestationConfig, logger: AttestationLogger = NOP_ATTESTATION_LOGGER, deps: ValidatorDependencies = {}): Validator {
  return variantDescriptor(config.variant).validator(config, logger, deps);
}

/** Decodes the attestation config file's JSON for `variant` and builds its validator. */
export function validatorFromConfigJson(
  json: string | Uint8Array,
  variant: VariantId | string,
  logger: AttestationLogger = NOP_ATTESTATION_LOGGER,
  deps: ValidatorDependencies = {},
): Validator {
  return validatorFor(unmarshalAttestationConfig(json, variant), logger, deps);
}
