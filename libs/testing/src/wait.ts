import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { WORKSPACE_ROOT } from './process.js';

/** Polls `fn` every 250 ms until it returns a value (errors count as "not yet"); throws after `timeoutMs`. */
export async function eventually<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The kubectl the setup unpacks into `.tools/`, else one on PATH; throws when there is none. */
export function kubectlBinary(): string {
  const local = join(WORKSPACE_ROOT, '.tools', 'kubectl', 'kubectl');
  if (existsSync(local)) return local;
  if (spawnSync('which', ['kubectl']).status === 0) return 'kubectl';
  throw new Error('kubectl is not available (tools/scripts/setup.sh unpacks it into .tools/)');
}
