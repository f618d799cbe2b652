/**
 * A TPM 2.0 client in TypeScript: bounds-checked marshalling, the commands attestation and the node
 * lock need, transports for `/dev/tpmrm0` and swtpm sockets, and quote verification without a TPM.
 * The swtpm test fixture is at `@asterism/tpm/testing`.
 */
export * from './constants.js';
export { QuoteVerificationError, TpmError, TpmParseError, TpmResponseError, TpmTransportError, type TpmErrorCode } from './errors.js';
export { describeResponseCode, TPM_RC, type ResponseCodeInfo } from './response-codes.js';
export { Reader, tpm2b, u16, u32, u8 } from './marshal.js';
export { decodeQuoteAttest, type ClockInfo, type QuoteAttest } from './structures/attest.js';
export { encodeDigestValues, encodePcrSelection, readDigestValues, readPcrSelection, type PcrSelection, type TaggedDigest } from './structures/pcr-selection.js';
export {
  decodePublic,
  encodePublic,
  publicKeyObject,
  publicName,
  readPublic,
  samePublicKey,
  TPMA_OBJECT,
  type EccParameters,
  type RsaParameters,
  type Scheme,
  type SymDef,
  type TpmtPublic,
} from './structures/public.js';
export { decodeSignature, encodeSignature, readSignature, type TpmtSignature } from './structures/signature.js';
export { AK_ATTRIBUTES, akTemplateEcc, akTemplateRsa } from './templates.js';
export { DeviceTransport, SerialQueue, SocketTransport, type SocketAddress, type TpmTransport } from './transport.js';
export * from './responses.js';
export { buildCommand, range, softwareExtend, TpmClient, type Hierarchy, type PcrValues } from './client.js';
export { verifyQuote, type QuoteToVerify } from './verify.js';
export { SWTPM_CTRL, swtpmControl, swtpmInit, swtpmShutdown } from './swtpm-control.js';
