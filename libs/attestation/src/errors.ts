import { AsterismError } from '@asterism/errors';

/**
 * Stable reason codes for attestation failures. "Crypto says no" (signature, chain, digest) and
 * "policy says no" (measurements, TCB, nonce binding) are distinguishable by code.
 */
export type AttestationErrorCode =
  | 'VARIANT_UNKNOWN'
  | 'DOCUMENT_MALFORMED'
  | 'NONCE_MISMATCH'
  | 'USER_DATA_MISMATCH'
  | 'MEASUREMENT_MISMATCH'
  | 'MEASUREMENTS_INVALID'
  | 'QUOTE_MISSING'
  | 'QUOTE_INVALID'
  | 'QUOTE_SIGNATURE_INVALID'
  | 'PCR_DIGEST_MISMATCH'
  | 'AK_UNTRUSTED'
  | 'AK_MISMATCH'
  | 'AK_MISSING'
  | 'EVENT_LOG_INVALID'
  | 'EVENT_LOG_MISMATCH'
  | 'CERT_CHAIN_INVALID'
  | 'CERT_INVALID'
  | 'CERT_EXPIRED'
  | 'REPORT_INVALID'
  | 'REPORT_SIGNATURE_INVALID'
  | 'REPORT_DATA_MISMATCH'
  | 'CHIP_ID_MISMATCH'
  | 'TCB_TOO_LOW'
  | 'TCB_MISMATCH'
  | 'VMPL_MISMATCH'
  | 'ID_KEY_UNTRUSTED'
  | 'MAA_TOKEN_INVALID'
  | 'PRODUCT_UNSUPPORTED'
  | 'COLLATERAL_UNAVAILABLE'
  | 'COLLATERAL_INVALID'
  | 'POLICY_VIOLATION'
  | 'CONFIG_INVALID'
  | 'NODE_ALREADY_INITIALIZED'
  | 'ISSUER_FAILED'
  | 'TIMEOUT'
  // Intel TDX DCAP quote verification (docs/protocol/tdx-dcap.md)
  | 'QUOTE_VERSION_UNSUPPORTED'
  | 'QE_REPORT_SIGNATURE_INVALID'
  | 'QE_REPORT_DATA_MISMATCH'
  | 'QE_IDENTITY_MISMATCH'
  | 'CERT_REVOKED'
  | 'COLLATERAL_MALFORMED'
  | 'COLLATERAL_SIGNATURE_INVALID'
  | 'COLLATERAL_MISMATCH'
  | 'COLLATERAL_EXPIRED'
  | 'TCB_LEVEL_NOT_FOUND'
  | 'TCB_STATUS_REJECTED'
  // Current-generation evidence (docs/protocol/tdx-dcap.md, docs/protocol/sev-snp.md)
  | 'TDX_MODULE_MISMATCH'
  | 'MRSERVICETD_MISMATCH'
  | 'REPORT_VERSION_TOO_LOW'
  | 'MITIGATION_MISSING'
  // Cloud vTPM variants (docs/protocol/cloud-vtpm-variants.md)
  | 'ROOT_EXPIRED'
  | 'TPM_SUPPORT_MISSING'
  | 'PLATFORM_CHECK_FAILED'
  | 'CLOUD_API_FAILED';

/** Why a piece of evidence was rejected (or could not be produced). */
export class AttestationError extends AsterismError<AttestationErrorCode> {}
