/**
 * Reproducible `.tar.gz` archives: entries sorted by name, every time stamp set to the source
 * date, owner and group 0, permissions normalized (GNU tar), then gzip without a name or time
 * stamp (node:zlib). The same files and source date give the same bytes.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';

const run = promisify(execFile);

/** The tar stream of `entries` (paths relative to `dir`, recursively), time stamps = `epoch` (seconds). */
async function reproducibleTar(dir: string, entries: string[], epoch: number): Promise<Buffer> {
  if (!Number.isInteger(epoch) || epoch < 0) throw new Error(`invalid source date ${epoch}`);
  const { stdout } = await run(
    'tar',
    ['--sort=name', `--mtime=@${epoch}`, '--owner=0', '--group=0', '--numeric-owner', '--mode=u+rw,go-w,go+rX', '--format=gnu', '-C', dir, '-cf', '-', '--', ...[...entries].sort()],
    { encoding: 'buffer', maxBuffer: 1 << 30 },
  );
  return stdout;
}

/** Archives `entries` (paths relative to `dir`, recursively) into `out` (uncompressed tar). */
export async function writeReproducibleTar(dir: string, entries: string[], out: string, epoch: number): Promise<void> {
  await writeFile(out, await reproducibleTar(dir, entries, epoch));
}

/** Archives `entries` (paths relative to `dir`, recursively) into `out`, gzip-compressed. */
export async function reproducibleTarGz(dir: string, entries: string[], out: string, epoch: number): Promise<void> {
  await writeFile(out, gzipSync(await reproducibleTar(dir, entries, epoch), { level: 9 }));
}

/** Unpacks a `.tar` or `.tar.gz` into `dir`. */
export async function extractTar(archive: string, dir: string): Promise<void> {
  await run('tar', ['-xf', archive, '-C', dir, '--no-same-owner']);
}
