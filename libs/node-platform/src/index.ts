/**
 * The node's attestation platform for its variant (README.md): the issuer over the variant table,
 * the node marker and cluster-ID register, the shared TPM, and the flags naming them. Used by
 * apps/bootstrapper and apps/verification-service.
 */
export { FIRMWARE_EVENT_LOG_PATH, firmwareEventLog, issuerFor, tdIssuerFor, type NodeInterfaces } from './issuer-for.js';
export { attestationVariant, tpmFlag } from './platform-flags.js';
export { nodeInterfaces, nodePlatformFor, releaseAttestationKeys, type NodePlatform, type NodePlatformConfig } from './platform.js';
export { openTransport, SharedTpm, type MarkReader } from './shared-tpm.js';
