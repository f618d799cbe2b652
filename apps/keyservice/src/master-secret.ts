import { readFile } from 'node:fs/promises';
import { MASTER_SECRET_LENGTH_MIN, RNG_LENGTH_DEFAULT, type MasterSecret } from '@asterism/crypto';
import { AsterismError } from '@asterism/errors';

/** Why the master secret could not be loaded. */
export class MasterSecretError extends AsterismError<'SECRET_FILE_UNREADABLE' | 'SECRET_TOO_SHORT' | 'SALT_TOO_SHORT'> {}

async function readRaw(path: string, what: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
    throw new MasterSecretError('SECRET_FILE_UNREADABLE', `reading ${what} file ${path}: ${code}`, { details: { path, errno: code } });
  }
}

/**
 * Reads the raw master secret and salt files (mounted from the constellation-mastersecret Secret).
 * The reference refuses master secrets shorter than 16 bytes and salts shorter than 32 bytes.
 */
export async function loadMasterSecret(secretPath: string, saltPath: string): Promise<MasterSecret> {
  const key = await readRaw(secretPath, 'master secret');
  if (key.length < MASTER_SECRET_LENGTH_MIN) {
    throw new MasterSecretError(
      'SECRET_TOO_SHORT',
      `master secret in ${secretPath} is ${key.length} bytes, need at least ${MASTER_SECRET_LENGTH_MIN}`,
      { details: { path: secretPath, length: key.length, min: MASTER_SECRET_LENGTH_MIN } },
    );
  }
  const salt = await readRaw(saltPath, 'salt');
  if (salt.length < RNG_LENGTH_DEFAULT) {
    throw new MasterSecretError('SALT_TOO_SHORT', `salt in ${saltPath} is ${salt.length} bytes, need at least ${RNG_LENGTH_DEFAULT}`, {
      details: { path: saltPath, length: salt.length, min: RNG_LENGTH_DEFAULT },
    });
  }
  return { key, salt };
}
