/**
 * AMD SEV-SNP: report parsing, AMD certificates and chain, the shared verifier, KDS collateral,
 * and the aws-sev-snp, azure-sev-snp and gcp-sev-snp issuers and validators (registered in the
 * validator registry on import). Wire facts: docs/protocol/sev-snp.md.
 */
export { AwsSevSnpIssuer, AwsSevSnpValidator } from './aws.js';
export { AzureSevSnpIssuer, AzureSevSnpValidator, checkIdKeyDigest, type AzureSevSnpIssuerOptions } from './azure.js';
export { CERT_TABLE_GUID, encodeCertTable, parseCertTable } from './cert-table.js';
export { SignatureMemo, verifyAsk, verifyArk, verifySignerChain } from './chain.js';
export { MILAN_NAMES, parseAmdChain, parseAmdCertificate, parseSignerCertificate, SNP_OID, type AmdCertificate, type AmdChain, type SignerCertificate } from './certs.js';
export { checkReportAgainstSigner, checkReportClaims, checkReportData, checkTcbRules, type SnpReportPolicy } from './checks.js';
export {
  AMD_KDS_BASE_URL,
  chainKey,
  chainUrl,
  SNP_COLLATERAL_CACHES,
  SnpCollateral,
  SnpCollateralViews,
  vcekKey,
  vcekUrl,
  type ConfiguredAsks,
  type SnpCollateralOptions,
} from './collateral.js';
export { ConfigfsTsmReportSource, type ExtendedReport, type SnpReportSource } from './configfs-tsm.js';
export {
  GCE_COMPUTE_BASE_URL,
  GCE_METADATA_BASE_URL,
  GceComputeShieldedIdentity,
  GceMetadataClient,
  type GceInstanceInfoSource,
  type GceShieldedIdentitySource,
} from './gce.js';
export { GCE_AK_CERT_NV_INDEX_RSA, GCE_AK_TEMPLATE_NV_INDEX_RSA, GcpSevSnpIssuer, GcpSevSnpValidator, loadGceAttestationKey } from './gcp.js';
export { AZURE_AK_HANDLE, AZURE_HCL_REPORT_NV_INDEX, checkHclAttestationKey, encodeHclReport, parseHclReport, type HclReport } from './hcl.js';
export { decodeSnpInstanceInfo, encodeSnpInstanceInfo, type AzureInstanceInfo, type GceInstanceInfo, type SnpInstanceInfo } from './instance-info.js';
export { JwksMaaTokenVerifier, type MaaTokenVerifier } from './maa.js';
export { productLineOf, requireSupportedProduct, SUPPORTED_PRODUCT_LINES, type SnpProductLine } from './product.js';
export { decodePolicy, parseReport, REPORT_SIZE, SIGNED_SIZE, type SnpFirmwareVersion, type SnpPolicy, type SnpReport, type SnpSigningKey } from './report.js';
export { verifyReportSignature } from './signature.js';
export { decodeTcb, encodeTcb, formatTcb, TCB_COMPONENTS, type TcbComponent, type TcbVersion } from './tcb.js';
export { AZURE_IMDS_BASE_URL, fetchThimCertificates, type ThimCertificates } from './thim.js';
export { akDigest, paddedReportData, snpVerifierFor, type SnpValidatorDependencies } from './validator.js';
export { SnpVerifier, type ReportBinding, type SnpEvidence, type SnpVerifierOptions, type VerifiedSnpReport } from './verifier.js';
export { effectiveMinimumTcb, refusalRisks, type SnpRefusalRisk, type SnpWarningOptions, type SnpWarningSink, type UpcomingTcbMinimum } from './warnings.js';
