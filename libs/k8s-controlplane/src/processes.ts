import { createServer } from 'node:net';

export { ManagedProcess } from '@asterism/child-process';

/** A free TCP port on 127.0.0.1 (best effort: the port is released before it is used). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Polls `check` until it resolves true, failing after `timeoutMs` or when `alive()` turns false. */
export async function waitFor(what: string, check: () => Promise<boolean>, opts: { timeoutMs: number; alive?: () => boolean; hint?: () => string }): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      /* not yet */
    }
    if (opts.alive && !opts.alive()) throw new Error(`${what}: process exited${opts.hint ? `; ${opts.hint()}` : ''}`);
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${opts.timeoutMs} ms${opts.hint ? `; ${opts.hint()}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
