import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Writes node files the way the reference does: create-exclusive (an existing file is an error,
 * so a half-finished earlier join is never silently overwritten), mode 0600, parent folders
 * created. `root` re-bases absolute paths (the local cluster gives each node its own root).
 */
export class NodeFileWriter {
  constructor(private readonly root = '') {}

  /** The real path of a node path under this writer's root. */
  resolve(path: string): string {
    return this.root ? `${this.root.replace(/\/$/, '')}${path.startsWith('/') ? '' : '/'}${path}` : path;
  }

  /** Creates `path` with `data`; fails with EEXIST when it already exists. */
  async writeExclusive(path: string, data: Uint8Array | string): Promise<void> {
    const real = this.resolve(path);
    await mkdir(dirname(real), { recursive: true });
    const fh = await open(real, 'wx', 0o600);
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
  }
}
