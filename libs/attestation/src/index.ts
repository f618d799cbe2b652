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
export { attestationKeyDigest } from './ak-digest.js';
export { decodeDocument, encodeDocument, findSha256QuoteIndex, type PcrBank, type TpmAttestation, type TpmQuote, type VtpmAttestationDocument } from './vtpm/document.js';
export { registerValidator, validatorFor, validatorFromConfigJson, validatorVariants, type ValidatorConstructor, type ValidatorDependencies } from './choose.js';
export { VtpmIssuer, type LoadedAttestationKey, type TpmOpener, type VtpmIssuerOptions } from './vtpm/issuer.js';
export { VtpmValidator, type VtpmValidatorOptions } from './vtpm/validator.js';
export { QemuVtpmIssuer, QemuVtpmValidator } from './vtpm/qemu.js';
export * from './collateral/index.js';
export * from './snp/index.js';
export * from './tdx/index.js';
export { ConfigfsTsm, CONFIGFS_TSM_REPORT_DIR, NODE_TSM_FS, type ConfigfsTsmOptions, type TsmAnswer, type TsmFailure, type TsmFileSystem, type TsmProvider } from './tsm/configfs-tsm.js';
export { HCL_REPORT_NV_INDEX, parseTdxHclReport, type TdxHclReport } from './azure/hcl-report.js';
export { checkHclAkBinding } from './azure/hcl-ak.js';
export { checkAzureTdxPolicy } from './azure/tdx-policy.js';
export {
  AZURE_IMDS_BASE_URL,
  AzureTdxIssuer,
  AzureTdxValidator,
  type AzureTdxIssuerOptions,
  azureTdxInstanceInfo,
  azureTdxTrustedKey,
  dcapVerifierFor,
  decodeAzureTdxInstanceInfo,
  encodeAzureTdxInstanceInfo,
  ImdsTdQuoteClient,
  registerAzureTdxValidator,
  type AzureTdxInstanceInfo,
  type AzureTdxTrustOptions,
  type TdQuoteClient,
} from './azure/tdx.js';
export { caIssuerUrls, checkRootValidity, fetchIssuer, verifyAkCertificateChain, type AkChainInput } from './azure/ak-cert-chain.js';
export {
  AZURE_AK_CERT_NV_INDEX,
  AzureTrustedLaunchIssuer,
  AzureTrustedLaunchValidator,
  decodeTrustedLaunchInstanceInfo,
  defaultTrustedLaunchRoots,
  encodeTrustedLaunchInstanceInfo,
  trustedLaunchTrustedKey,
  type AzureTrustedLaunchDependencies,
  type AzureTrustedLaunchIssuerOptions,
  type AzureTrustedLaunchValidatorOptions,
  type TrustedLaunchInstanceInfo,
  type TrustedLaunchTrustOptions,
} from './azure/trustedlaunch.js';
export { AWS_IMDS_BASE_URL, encodeIdentityDocument, ImdsIdentitySource, parseIdentityDocument, type InstanceIdentityDocument, type InstanceIdentitySource } from './aws/identity-document.js';
export { AwsNitroTpmIssuer, AwsNitroTpmValidator, checkNitroImage, NO_EC2_IMAGE_LOOKUP, TPM_SUPPORT_V2, type AwsNitroTpmDependencies, type AwsNitroTpmValidatorOptions, type ImageTpmSupportLookup } from './aws/nitro-tpm.js';
export {
  ComputeShieldedIdentitySource,
  decodeGceInstanceInfo,
  encodeGceInstanceInfo,
  GCE_COMPUTE_API_BASE_URL,
  GCE_METADATA_BASE_URL,
  GceMetadataInstanceSource,
  metadataAccessToken,
  type AccessTokenSource,
  type GceInstanceInfo,
  type GceInstanceSource,
  type ShieldedIdentitySource,
} from './gcp/gce-identity.js';
export { checkGceSevPlatform, gceFirmwareVersion, gcePlatformState, GCE_TECHNOLOGY, type GcePlatformState } from './gcp/platform-state.js';
export { GCE_AK_CERT_NV_INDEX_RSA, GCE_AK_TEMPLATE_NV_INDEX_RSA, gceTrustedKey, GcpSevEsIssuer, GcpSevEsValidator, loadGceAttestationKey, type GcpSevEsDependencies, type GcpSevEsValidatorOptions } from './gcp/sev-es.js';
export { fetchBounded, httpCertificateFetcher, type BoundedFetchOptions, type BoundedResponse, type CertificateFetcher } from './cloud/http.js';
