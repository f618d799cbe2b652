import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The Go module with the interop peers (its own module, not part of the npm workspace). */
export const GO_PEER_DIR = join(import.meta.dirname, '..', 'go');
/** Built binaries are cached here, keyed by a hash of the Go sources. */
export const GO_PEER_CACHE = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'asterism', 'interop');

/** True when a Go toolchain is on PATH. */
export async function haveGo(): Promise<boolean> {
  try {
    await run('go', ['version']);
    return true;
  } catch {
    return false;
  }
}

/** Builds (or reuses) the interop-peer binary and returns its path. */
export async function buildGoPeer(): Promise<string> {
  return buildGoBinary(GO_PEER_DIR, 'interop-peer');
}

/**
 * Builds (or reuses) the Go module in `moduleDir` as `name` and returns the binary's path. Binaries
 * are cached in GO_PEER_CACHE keyed by a hash of the module's Go sources, go.mod and go.sum.
 */
export async function buildGoBinary(moduleDir: string, name: string): Promise<string> {
  const hash = createHash('sha256');
  for (const f of readdirSync(moduleDir).filter((n) => n.endsWith('.go') || n === 'go.mod' || n === 'go.sum').sort()) {
    hash.update(f).update(readFileSync(join(moduleDir, f)));
  }
  const bin = join(GO_PEER_CACHE, `${name}-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(bin)) return bin;
  mkdirSync(GO_PEER_CACHE, { recursive: true });
  const tmp = `${bin}.${process.pid}.tmp`;
  await run('go', ['build', '-o', tmp, '.'], { cwd: moduleDir, timeout: 600_000, env: { ...process.env, CGO_ENABLED: '0' } });
  renameSync(tmp, bin);
  return bin;
}

/** Outcome printed by `interop-peer client`. */
export interface GoClientResult {
  ok: boolean;
  code?: string;
  message?: string;
  dataKey?: string;
  messages?: string[];
  token?: string;
  kubeletCert?: string;
  certRequested: boolean;
  acceptableCAs: number;
}

/** Runs one Go client call against `addr`. */
export async function runGoClient(bin: string, addr: string, flags: string[]): Promise<GoClientResult> {
  const { stdout } = await run(bin, ['client', '-addr', addr, ...flags], { timeout: 30_000 });
  return JSON.parse(stdout) as GoClientResult;
}

/** Starts `interop-peer server` and resolves once it listens. */
export async function startGoServer(bin: string, flags: string[]): Promise<{ address: string; process: ChildProcess; stop(): void }> {
  const child = spawn(bin, ['server', '-listen', '127.0.0.1:0', ...flags], { stdio: ['ignore', 'pipe', 'inherit'] });
  const address = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (l) => {
      const m = /^LISTENING (\S+)$/.exec(l);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`interop-peer server exited with ${code}`)));
  });
  return { address, process: child, stop: () => child.kill('SIGTERM') };
}
