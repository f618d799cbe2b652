/** Intel TDX: DCAP quote parsing and verification against PCS collateral (docs/protocol/tdx-dcap.md). */
export { parseTdxQuote, type QeReport, type QuoteHeader, type TdReportBody, type TdxQuote } from './quote.js';
export { parseTcbStatuses, type TdxStatusPolicy } from './status-policy.js';
export { parseQeIdentity, parseTcbInfo, TCB_STATUSES, type DcapCollateral, type QeIdentity, type TcbStatus, type TdxTcbInfo, type TdxTcbLevel } from './collateral.js';
export { readPckTcb, type PckTcb } from './pck.js';
export { applyStatusPolicy, converge, evaluateTcb, type TcbEvaluation } from './tcb.js';
export { DcapVerifier, DEFAULT_ACCEPTED_TCB_STATUSES, type AuthenticatedQuote, type DcapVerification, type DcapVerifierOptions } from './verifier.js';
export { verifySignedCollateral } from './verifier.js';
export {
  CachedTdxCollateralSource,
  encodePcsRecord,
  INTEL_PCS_BASE_URL,
  INTEL_ROOT_CRL_URL,
  pcsCollateralFetcher,
  pcsRequest,
  verifyPcsRecord,
  type PcsFetcherOptions,
  type TdxCollateralSource,
  type TdxPlatform,
} from './pcs-collateral.js';
export { decodeTdxDocument, encodeTdxDocument, tdMeasurements, type TdxDocument } from './document.js';
export { ConfigfsTsmQuoteProvider, platformOf, QemuTdxIssuer, QemuTdxValidator, registerQemuTdxValidator, type QemuTdxValidatorOptions, type TdxQuoteProvider, type TdxQuoteVerifier } from './qemu-tdx.js';
