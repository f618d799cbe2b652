/** Attestation: variants and OIDs, Issuer/Validator interfaces, the dummy variant, Go-JSON helpers. */
export { AttestationError, type AttestationErrorCode } from './errors.js';
export { NOP_ATTESTATION_LOGGER, type AttestationLogger, type Issuer, type Validator } from './interfaces.js';
export { CLOUD_PROVIDERS, cloudProviderFromString, Variant, VARIANTS, variantsForProvider, type CloudProvider, type VariantName } from './variant.js';
export { DummyIssuer, DummyValidator } from './dummy.js';
export { goBytes, goBytesValue, goField, parseGoJsonObject } from './go-json.js';
