/**
 * Attestation: variants and OIDs, the Issuer/Validator interfaces, every variant's issuer and
 * validator, expected measurements, the per-variant attestation config and the collateral caches
 * behind SEV-SNP and TDX. Only what other projects import is exported here (the codecs underneath
 * stay internal); test vectors and fixtures are at `@asterism/attestation/testing`.
 */
export { attestationKeyDigest } from './ak-digest.js';
export { ImdsIdentitySource } from './aws/identity-document.js';
export { AwsNitroTpmIssuer } from './variants/aws-nitro-tpm.js';
export { AzureTdxIssuer, AzureTdxValidator, decodeAzureTdxInstanceInfo, encodeAzureTdxInstanceInfo, ImdsTdQuoteClient } from './variants/azure-tdx.js';
export { AZURE_AK_CERT_NV_INDEX, AzureTrustedLaunchIssuer } from './variants/azure-trustedlaunch.js';
export { validatorFor, validatorFromConfigJson } from './choose.js';
export { fetchBounded, httpCertificateFetcher } from './cloud/http.js';
export { CollateralCache } from './collateral/cache.js';
export { MemoryCollateralStore } from './collateral/memory-store.js';
export { type CollateralFetchOutcome, type CollateralLookupOutcome, type CollateralMetrics, type CollateralStore, type StoredCollateral } from './collateral/ports.js';
export { defaultAttestationConfig, encodeAttestationConfig, unmarshalAttestationConfig } from './attestation-config.js';
export { certificateFromPem } from './config/certificate.js';
export { INTEL_SGX_ROOT_CA_PEM } from './config/roots.js';
export { type AttestationConfig, type AzureTdxConfig, type SevSnpConfigBase } from './config/types.js';
export { DummyIssuer, DummyValidator } from './variants/dummy.js';
export { AttestationError, type AttestationErrorCode } from './errors.js';
export { type AccessTokenSource, ComputeShieldedIdentitySource, GCE_METADATA_BASE_URL, GceMetadataInstanceSource } from './gcp/gce-identity.js';
export { GCE_TECHNOLOGY } from './gcp/platform-state.js';
export { GCE_AK_CERT_NV_INDEX_RSA, GCE_AK_TEMPLATE_NV_INDEX_RSA, GcpSevEsIssuer } from './variants/gcp-sev-es.js';
export { goField, parseGoJsonObject } from './go-json.js';
export { type AttestationLogger, type Issuer, NOP_ATTESTATION_LOGGER, type Validator } from './interfaces.js';
export { compareMeasurements, measurementMismatchError } from './measurements/compare.js';
export { type Measurement, PCR_INDEX_CLUSTER_ID, TDX_INDEX_CLUSTER_ID, withAllBytes } from './measurements/measurement.js';
export { Measurements } from './measurements/measurements.js';
export { decodeImageMeasurementsV2, encodeImageMeasurementsV2, type ImageMeasurementsV2 } from './measurements/image-measurements.js';
export { AwsSevSnpIssuer } from './variants/aws-sev-snp.js';
export { AzureSevSnpIssuer } from './variants/azure-sev-snp.js';
export { CERT_TABLE_GUID, encodeCertTable, parseCertTable } from './snp/cert-table.js';
export { parseSignerCertificate } from './snp/certs.js';
export { checkReportData } from './snp/checks.js';
export { SnpCollateral } from './snp/collateral.js';
export { ConfigfsTsmReportSource } from './snp/configfs-tsm.js';
export { GceComputeShieldedIdentity, GceMetadataClient } from './snp/gce.js';
export { GcpSevSnpIssuer } from './variants/gcp-sev-snp.js';
export { AZURE_AK_HANDLE, AZURE_HCL_REPORT_NV_INDEX, encodeHclReport } from './snp/hcl.js';
export { decodeSnpInstanceInfo, encodeSnpInstanceInfo, type SnpInstanceInfo } from './snp/instance-info.js';
export { JwksMaaTokenVerifier } from './snp/maa.js';
export { productLineOf } from './snp/product.js';
export { parseReport, REPORT_SIZE, type SnpReport } from './snp/report.js';
export { formatTcb } from './snp/tcb.js';
export { type SnpValidatorDependencies, snpVerifierFor } from './snp/validator.js';
export { type SnpWarningOptions, type UpcomingTcbMinimum } from './snp/warnings.js';
export { type DcapCollateral, type TcbStatus } from './tdx/collateral.js';
export { type TcbEvaluation, type TcbVerdictStatus } from './tdx/tcb.js';
export { decodeTdxDocument, encodeTdxDocument, tdMeasurements } from './tdx/document.js';
export { CachedTdxCollateralSource, encodePcsRecord, pcsCollateralFetcher, type PcsFetcherOptions } from './tdx/pcs-collateral.js';
export { QemuTdxIssuer, QemuTdxValidator } from './variants/qemu-tdx.js';
export { ConfigfsTsmQuoteProvider, type TdxQuoteVerifier } from './tdx/quote-provider.js';
export { parseTdxQuote, type TdReportBody, type TdxQuote } from './tdx/quote.js';
export { parseTcbStatuses } from './tdx/status-policy.js';
export { type DcapVerification, DcapVerifier, DEFAULT_ACCEPTED_TCB_STATUSES } from './tdx/verifier.js';
export { CONFIGFS_TSM_REPORT_DIR, NODE_TSM_FS, type TsmFileSystem } from './tsm/configfs-tsm.js';
export { type CloudProvider } from './variant.js';
export { type IssuerEnvironment, type ValidatorDependencies, type ValidatorSourceKind, type VariantDescriptor } from './variants/descriptor.js';
export { registerVariant, Variant, variantDescriptor, variantDescriptors } from './variants/table.js';
export { decodeDocument, encodeDocument, findSha256QuoteIndex } from './vtpm/document.js';
export { type TpmOpener, VtpmIssuer } from './vtpm/issuer.js';
export { QemuVtpmIssuer, QemuVtpmValidator } from './variants/qemu-vtpm.js';
