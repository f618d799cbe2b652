/** SHA-256 of files and buffers, hex. */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/** SHA-256 of a file's bytes (streamed). */
export async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** SHA-256 over several parts, each prefixed with its length (no two part lists collide). */
export function sha256Parts(parts: (string | Buffer)[]): string {
  const h = createHash('sha256');
  for (const p of parts) {
    const b = typeof p === 'string' ? Buffer.from(p) : p;
    h.update(`${b.length}:`).update(b);
  }
  return h.digest('hex');
}
