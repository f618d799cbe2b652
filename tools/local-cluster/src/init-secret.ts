import { randomInt } from 'node:crypto';
import bcrypt from 'bcryptjs';

/** The reference's init secret alphabet (Terraform random_password with these specials). */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_%@';

/** A 32-character init secret and its bcrypt hash (cost 10, `$2a$`/`$2b$` like Terraform's). */
export async function newInitSecret(): Promise<{ secret: string; hash: string }> {
  let secret = '';
  for (let i = 0; i < 32; i++) secret += ALPHABET[randomInt(ALPHABET.length)];
  return { secret, hash: await bcrypt.hash(secret, 10) };
}
