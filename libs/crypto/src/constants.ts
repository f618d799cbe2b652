/** Lengths and key-id strings shared with the reference implementation (docs/protocol/constants.md, docs/protocol/key-hierarchy.md). */
export const STATE_DISK_KEY_LENGTH = 32;
export const DERIVED_KEY_LENGTH_DEFAULT = 32;
export const MASTER_SECRET_LENGTH_DEFAULT = 32;
/** The keyservice refuses shorter master secrets. */
export const MASTER_SECRET_LENGTH_MIN = 16;
/** Nonces and salts. */
export const RNG_LENGTH_DEFAULT = 32;
/** Every data-key id is prefixed with this before it becomes HKDF info. */
export const DEK_PREFIX = 'key-';
export const MEASUREMENT_SECRET_KEY_ID = 'measurementSecret';
export const SSH_CA_KEY_SUFFIX = 'ca_emergency_ssh';
export const CLUSTER_ID_INFO = 'key-clusterID';
/** ed25519 seed size. */
export const SSH_CA_SEED_LENGTH = 32;
