import { mkdir, open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { goField } from '@asterism/attestation';

/** File names the CLI writes into its workspace. */
export const WORKSPACE_FILES = {
  kubeconfig: 'asterism-admin.conf',
  masterSecret: 'asterism-mastersecret.json',
  clusterId: 'asterism-id.json',
} as const;

/**
 * Writes a file atomically with mode 0600: write to a temp file, fsync, rename. An existing
 * file is never half-overwritten; `exclusive` refuses to replace one at all.
 */
export async function writePrivateFile(path: string, data: string | Uint8Array, options: { exclusive?: boolean } = {}): Promise<void> {
  if (options.exclusive) {
    const fh = await open(path, 'wx', 0o600);
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    return;
  }
  const tmp = `${path}.tmp-${process.pid}`;
  const fh = await open(tmp, 'w', 0o600);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
}

/** The master secret file: Go JSON `{"key": b64, "salt": b64}` like the reference CLI's. */
export function encodeMasterSecretFile(master: { key: Uint8Array; salt: Uint8Array }): string {
  return `${JSON.stringify({ key: Buffer.from(master.key).toString('base64'), salt: Buffer.from(master.salt).toString('base64') }, null, 2)}\n`;
}

/** Decodes the master secret file (keys bound as Go's decoder does, see goField). */
export function decodeMasterSecretFile(text: string): { key: Buffer; salt: Buffer } {
  const raw = JSON.parse(text) as Record<string, unknown>;
  const get = (k: string) => goField(raw, k);
  const key = get('key');
  const salt = get('salt');
  if (typeof key !== 'string' || typeof salt !== 'string') throw new Error('master secret file needs "key" and "salt" (base64)');
  return { key: Buffer.from(key, 'base64'), salt: Buffer.from(salt, 'base64') };
}

/** Creates the workspace folder (0700). */
export async function ensureWorkspace(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
}

/** Path of a workspace file. */
export function workspacePath(dir: string, file: keyof typeof WORKSPACE_FILES): string {
  return join(dir, WORKSPACE_FILES[file]);
}
