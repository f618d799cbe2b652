/**
 * Attestation: variants and OIDs, Issuer/Validator interfaces, every variant's issuer and validator,
 * expected measurements and the per-variant attestation config. Codecs underneath (event log,
 * extra-data binding, Go []byte helpers) are internal to this library.
 */
export { AttestationError, type AttestationErrorCode } from './errors.js';
export { NOP_ATTESTATION_LOGGER, type AttestationLogger, type Issuer, type Validator } from './interfaces.js';
export { CLOUD_PROVIDERS, cloudProviderFromString, Variant, VARIANTS, variantsForProvider, type CloudProvider, type VariantName } from './variant.js';
export { DummyIssuer, DummyValidator } from './dummy.js';
export { goField, parseGoJsonObject } from './go-json.js';
export * from './measurements/index.js';
export * from './config/index.js';
export { decodeDocument, findSha256QuoteIndex, type PcrBank, type TpmAttestation, type TpmQuote, type VtpmAttestationDocument } from './vtpm/document.js';
export { registerValidator, validatorFor, validatorFromConfigJson, validatorVariants, type ValidatorConstructor, type ValidatorDependencies } from './choose.js';
export { VtpmIssuer, type LoadedAttestationKey, type TpmOpener, type VtpmIssuerOptions } from './vtpm/issuer.js';
export { VtpmValidator, type VtpmValidatorOptions } from './vtpm/validator.js';
export { QemuVtpmIssuer, QemuVtpmValidator } from './vtpm/qemu.js';
export * from './collateral/index.js';
export * from './snp/index.js';
export * from './tdx/index.js';
export { HCL_REPORT_NV_INDEX, parseTdxHclReport, type TdxHclReport } from './azure/hcl-report.js';
export { checkHclAkBinding } from './azure/hcl-ak.js';
export { checkAzureTdxPolicy } from './azure/tdx-policy.js';
export {
  AZURE_IMDS_BASE_URL,
  AzureTdxValidator,
  azureTdxInstanceInfo,
  azureTdxTrustedKey,
  decodeAzureTdxInstanceInfo,
  encodeAzureTdxInstanceInfo,
  ImdsTdQuoteClient,
  registerAzureTdxValidator,
  type AzureTdxInstanceInfo,
  type AzureTdxTrustOptions,
  type TdQuoteClient,
} from './azure/tdx.js';
