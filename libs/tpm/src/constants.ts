/** TPM 2.0 constants (TPM 2.0 Library Part 2) used by this client. */

/** Command/response tags (TPM_ST). */
export const TPM_ST = {
  NO_SESSIONS: 0x8001,
  SESSIONS: 0x8002,
  ATTEST_QUOTE: 0x8018,
  CREATION: 0x8021,
} as const;

/** Command codes (TPM_CC) with their names for error messages. */
export const TPM_CC = {
  NV_Read: 0x14e,
  CreatePrimary: 0x131,
  PCR_Event: 0x13c,
  Startup: 0x144,
  Shutdown: 0x145,
  Quote: 0x158,
  FlushContext: 0x165,
  NV_ReadPublic: 0x169,
  ReadPublic: 0x173,
  GetCapability: 0x17a,
  PCR_Read: 0x17e,
  PCR_Extend: 0x182,
} as const;
export type TpmCommandName = keyof typeof TPM_CC;

/** Algorithm identifiers (TPM_ALG). */
export const TPM_ALG = {
  RSA: 0x0001,
  SHA1: 0x0004,
  HMAC: 0x0005,
  AES: 0x0006,
  KEYEDHASH: 0x0008,
  SHA256: 0x000b,
  SHA384: 0x000c,
  SHA512: 0x000d,
  NULL: 0x0010,
  SM3_256: 0x0012,
  RSASSA: 0x0014,
  RSAES: 0x0015,
  RSAPSS: 0x0016,
  OAEP: 0x0017,
  ECDSA: 0x0018,
  ECDH: 0x0019,
  ECDAA: 0x001a,
  SM2: 0x001b,
  ECSCHNORR: 0x001c,
  ECC: 0x0023,
  SYMCIPHER: 0x0025,
  CFB: 0x0043,
} as const;

/** Digest sizes and node:crypto names of the hash algorithms we can compute. */
export const HASH_INFO: ReadonlyMap<number, { size: number; name: string }> = new Map([
  [TPM_ALG.SHA1, { size: 20, name: 'sha1' }],
  [TPM_ALG.SHA256, { size: 32, name: 'sha256' }],
  [TPM_ALG.SHA384, { size: 48, name: 'sha384' }],
  [TPM_ALG.SHA512, { size: 64, name: 'sha512' }],
  [TPM_ALG.SM3_256, { size: 32, name: 'sm3' }],
]);

/** Permanent handles (TPM_RH / TPM_RS). */
export const TPM_RH = {
  OWNER: 0x40000001,
  NULL: 0x40000007,
  PW: 0x40000009,
  LOCKOUT: 0x4000000a,
  ENDORSEMENT: 0x4000000b,
  PLATFORM: 0x4000000c,
} as const;

/** Startup types (TPM_SU). */
export const TPM_SU = { CLEAR: 0x0000, STATE: 0x0001 } as const;

/** Capabilities (TPM_CAP). */
export const TPM_CAP = {
  ALGS: 0x00000000,
  HANDLES: 0x00000001,
  COMMANDS: 0x00000002,
  PCRS: 0x00000005,
  TPM_PROPERTIES: 0x00000006,
} as const;

/** A few TPM properties (TPM_PT). */
export const TPM_PT = {
  MANUFACTURER: 0x105,
  FIRMWARE_VERSION_1: 0x10b,
  FIRMWARE_VERSION_2: 0x10c,
  PCR_COUNT: 0x112,
  NV_BUFFER_MAX: 0x12c,
  MAX_DIGEST: 0x120,
} as const;

/** Handle types (first byte of a handle). */
export const TPM_HT = { PCR: 0x00, NV_INDEX: 0x01, HMAC_SESSION: 0x02, POLICY_SESSION: 0x03, PERMANENT: 0x40, TRANSIENT: 0x80, PERSISTENT: 0x81 } as const;

/** TPMS_ATTEST.magic. */
export const TPM_GENERATED_VALUE = 0xff544347;

/** ECC curves (TPM_ECC_CURVE) with their JWK/node:crypto names and coordinate sizes. */
export const TPM_ECC_CURVE: ReadonlyMap<number, { name: string; jwk: string; size: number }> = new Map([
  [0x0003, { name: 'NIST_P256', jwk: 'P-256', size: 32 }],
  [0x0004, { name: 'NIST_P384', jwk: 'P-384', size: 48 }],
  [0x0005, { name: 'NIST_P521', jwk: 'P-521', size: 66 }],
]);
export const TPM_ECC_NIST_P256 = 0x0003;

/** Well-known NV indices of EK certificates (TCG EK Credential Profile). */
export const EK_CERT_NV_INDEX = {
  RSA_2048: 0x01c00002,
  ECC_P256: 0x01c0000a,
  ECC_P384: 0x01c00016,
} as const;

/** Number of PCRs of a PC-client TPM. */
export const PCR_COUNT = 24;

/** Maximum size of a TPM command or response we accept (TPM2 MAX_COMMAND_SIZE is typically 4096). */
export const MAX_RESPONSE_SIZE = 8192;

/** Name of an algorithm id, for messages. */
export function algName(alg: number): string {
  for (const [k, v] of Object.entries(TPM_ALG)) if (v === alg) return k;
  return `0x${alg.toString(16).padStart(4, '0')}`;
}
