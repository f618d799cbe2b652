import { AsterismError } from '@asterism/errors';

/** Codes of errors raised by @asterism/crypto. */
export type CryptoErrorCode =
  | 'KEY_LENGTH_INVALID'
  | 'SECRET_EMPTY'
  | 'URI_INVALID'
  | 'URI_UNKNOWN_KMS'
  | 'URI_UNKNOWN_STORAGE'
  | 'URI_MISSING_PARAMETER'
  | 'SEED_TOO_SHORT'
  | 'DER_MALFORMED';

/** An input to a key-derivation or encoding helper was unusable. */
export class CryptoError extends AsterismError<CryptoErrorCode> {}
