import { hkdfSync } from 'node:crypto';
import { CryptoError } from './errors.js';

/** HKDF-SHA256 can expand to at most 255 blocks of 32 bytes (RFC 5869). */
export const HKDF_MAX_LENGTH = 255 * 32;

/**
 * RFC 5869 HKDF-SHA256 (extract + expand). An empty salt is the RFC default (32 zero bytes),
 * which HMAC treats identically to an empty key.
 */
export function deriveKey(secret: Uint8Array, salt: Uint8Array, info: string | Uint8Array, length: number): Buffer {
  if (!Number.isInteger(length) || length <= 0 || length > HKDF_MAX_LENGTH) {
    throw new CryptoError('KEY_LENGTH_INVALID', `invalid key length ${length}: must be between 1 and ${HKDF_MAX_LENGTH}`, {
      details: { length, max: HKDF_MAX_LENGTH },
    });
  }
  const infoBytes = typeof info === 'string' ? Buffer.from(info, 'utf8') : info;
  return Buffer.from(hkdfSync('sha256', secret, salt, infoBytes, length));
}
