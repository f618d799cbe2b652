import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { LogSource } from './ports.js';

/**
 * The node's recent logs for a failed init: the tail of the bootstrapper's own JSON log file
 * (the reference ran journalctl; a local node has no journal of its own). At most `maxBytes`,
 * so a long-running node does not stream megabytes to the CLI.
 */
export class FileLogSource implements LogSource {
  constructor(
    private readonly path: string,
    private readonly maxBytes = 256 * 1024,
  ) {}

  async *read(): AsyncIterable<Buffer> {
    let size: number;
    try {
      size = (await stat(this.path)).size;
    } catch {
      return;
    }
    // Nothing to send (an empty file, or /dev/null when the node logs only to the journal).
    if (size === 0) return;
    const start = Math.max(0, size - this.maxBytes);
    for await (const chunk of createReadStream(this.path, { start, end: size - 1 })) yield chunk as Buffer;
  }
}
