/** Key hierarchy (HKDF), randomness and kms:// URIs shared by the bootstrapper, joinservice, keyservice and CLI. */
export * from './constants.js';
export { DerReader, decodeOid, decodeTime, TAG as DER_TAG, type DerElement } from './der-reader.js';
export { certificatePem, derOid, derTime, derTlv, encodeOid, positiveSerial } from './der-writer.js';
export { CryptoError, type CryptoErrorCode } from './errors.js';
export { deriveKey, HKDF_MAX_LENGTH, HkdfSha256 } from './hkdf.js';
export { ClusterKms, dataKeyInfo, deriveClusterId, stateDiskKeyId, type MasterSecret } from './key-hierarchy.js';
export {
  decodeBase64UrlPadded,
  encodeBase64UrlPadded,
  encodeClusterKmsUri,
  NO_STORE_URI,
  parseKmsUri,
  parseStorageUri,
  type KmsConfig,
  type StorageConfig,
} from './kms-uri.js';
export { publicKeyFromSpki } from './public-key.js';
export { generateNonce, randomBytes, randomSerialNumber } from './random.js';
export {
  authorizedKeyLine,
  parseAuthorizedKeyLine,
  parseOpenSshPrivateKey,
  parseSshCertificate,
  parseSshPublicKey,
  signHostCertificate,
  sshCaFromSeed,
  SshError,
  sshString,
  SSH_CERT_TYPE_HOST,
  type HostCertificateOptions,
  type SshCertificate,
  type SshPublicKey,
  type SshSigner,
} from './ssh.js';
