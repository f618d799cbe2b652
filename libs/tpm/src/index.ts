/**
 * A TPM 2.0 client in TypeScript: the commands attestation and the node lock need, transports for
 * `/dev/tpmrm0` and swtpm sockets, the TPM structures attestation documents carry, and quote
 * verification without a TPM. Marshalling and command framing stay internal. The swtpm test
 * fixture is at `@asterism/tpm/testing`.
 */
export * from './constants.js';
export { QuoteVerificationError, TpmError, TpmParseError, TpmResponseError, TpmTransportError, type TpmErrorCode } from './errors.js';
export { TPM_RC } from './response-codes.js';
export { decodeQuoteAttest, type ClockInfo, type QuoteAttest } from './structures/attest.js';
export type { PcrSelection, TaggedDigest } from './structures/pcr-selection.js';
export {
  decodePublic,
  encodePublic,
  publicKeyObject,
  publicName,
  samePublicKey,
  TPMA_OBJECT,
  type EccParameters,
  type RsaParameters,
  type Scheme,
  type SymDef,
  type TpmtPublic,
} from './structures/public.js';
export { decodeSignature, type TpmtSignature } from './structures/signature.js';
export { AK_ATTRIBUTES, akTemplateEcc, akTemplateRsa } from './templates.js';
export { DeviceTransport, SocketTransport, type SocketAddress, type TpmTransport } from './transport.js';
export * from './responses.js';
export { range, softwareExtend, TpmClient, type Hierarchy, type PcrValues } from './client.js';
export { verifyQuote, type QuoteToVerify } from './verify.js';
export { swtpmInit } from './swtpm-control.js';
