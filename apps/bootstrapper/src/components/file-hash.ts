import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/** Lower-case hex SHA-256 of a file's content, streamed. */
export async function sha256OfFile(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}
