import { unmarshalAttestationConfig } from './config/attestation-config.js';
import type { AttestationConfig } from './config/types.js';
import { AttestationError } from './errors.js';
import { NOP_ATTESTATION_LOGGER, type AttestationLogger, type Validator } from './interfaces.js';
import type { AwsNitroTpmDependencies } from './aws/nitro-tpm.js';
import type { AzureTrustedLaunchDependencies } from './azure/trustedlaunch.js';
import type { GcpSevEsDependencies } from './gcp/sev-es.js';
import type { SnpValidatorDependencies } from './snp/validator.js';
import { Variant } from './variant.js';
import { BUILT_IN_VALIDATORS } from './variants.js';

/**
 * What validators may need besides their config: caches, identity sources, a clock. The
 * process that builds validators (joinservice, CLI) creates these once; each variant reads its
 * own part.
 */
export interface ValidatorDependencies {
  readonly snp?: SnpValidatorDependencies;
  readonly azureTrustedLaunch?: AzureTrustedLaunchDependencies;
  readonly awsNitroTpm?: AwsNitroTpmDependencies;
  readonly gcpSevEs?: GcpSevEsDependencies;
}

/** Builds a validator of one variant from its decoded attestation config. */
export type ValidatorConstructor = (config: AttestationConfig, logger: AttestationLogger, deps: ValidatorDependencies) => Validator;

const constructors = new Map<string, ValidatorConstructor>(BUILT_IN_VALIDATORS);

/**
 * Registers (or replaces) the validator of a variant at run time: the built-in ones come from
 * variants.ts; the TDX variants are added at start-up with the process's collateral source.
 */
export function registerValidator(variant: string, ctor: ValidatorConstructor): void {
  Variant.fromString(variant);
  constructors.set(variant, ctor);
}

/** Variants with a registered validator. */
export function validatorVariants(): string[] {
  return [...constructors.keys()].sort();
}

/** The validator for a decoded config; CONFIG_INVALID when the variant has no validator here. */
export function validatorFor(config: AttestationConfig, logger: AttestationLogger = NOP_ATTESTATION_LOGGER, deps: ValidatorDependencies = {}): Validator {
  const ctor = constructors.get(config.variant);
  if (!ctor) {
    throw new AttestationError('CONFIG_INVALID', `no validator for attestation variant "${config.variant}" in this build (available: ${validatorVariants().join(', ')})`, {
      details: { variant: config.variant },
    });
  }
  return ctor(config, logger, deps);
}

/** Decodes the attestation config file's JSON for `variant` and builds its validator. */
export function validatorFromConfigJson(
  json: string | Uint8Array,
  variant: Variant | string,
  logger: AttestationLogger = NOP_ATTESTATION_LOGGER,
  deps: ValidatorDependencies = {},
): Validator {
  return validatorFor(unmarshalAttestationConfig(json, variant), logger, deps);
}
