/**
 * A TPM 2.0 client in TypeScript: the commands attestation and the node lock need, transports for
 * `/dev/tpmrm0` and swtpm sockets, the TPM structures attestation documents carry, and quote
 * verification without a TPM. Only what other projects import is exported here (marshalling,
 * command framing and response parsing stay internal). The swtpm test fixture is at
 * `@asterism/tpm/testing`.
 */
export { type Hierarchy, range, softwareExtend, TpmClient } from './client.js';
export { HASH_INFO, TPM_ALG, TPM_HT } from './constants.js';
export { QuoteVerificationError, TpmError, TpmResponseError } from './errors.js';
export { TPM_RC } from './response-codes.js';
export { decodePublic, encodePublic, publicKeyObject, samePublicKey, type TpmtPublic } from './structures/public.js';
export { swtpmInit } from './swtpm-control.js';
export { akTemplateRsa } from './templates.js';
export { DeviceTransport, SocketTransport, type TpmTransport } from './transport.js';
export { verifyQuote } from './verify.js';
