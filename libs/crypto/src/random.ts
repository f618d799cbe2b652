import { randomBytes as nodeRandomBytes } from 'node:crypto';
import { RNG_LENGTH_DEFAULT } from './constants.js';

/** Cryptographically secure random bytes from the OS CSPRNG. */
export function randomBytes(length: number): Buffer {
  return nodeRandomBytes(length);
}

/** A fresh 32-byte nonce. */
export function generateNonce(): Buffer {
  return nodeRandomBytes(RNG_LENGTH_DEFAULT);
}

/** A uniform random X.509 serial number in [0, 2^128), as big-endian bytes with a leading zero when needed. */
export function randomSerialNumber(): bigint {
  return BigInt(`0x${nodeRandomBytes(16).toString('hex')}`);
}
