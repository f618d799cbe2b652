// Test-only helpers of flood.int.spec.ts (not exported from index.ts): the attacker process, the
// servers' own admission counters, process samples and the figures file.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { AtlsServerCredentials } from './server-credentials.js';
import type { Outcome } from './services.fixture.js';

/** What the attacker process does (see flood-attacker.mjs). */
export interface AttackerOptions {
  readonly ports: readonly number[];
  /** Loopback source address, e.g. 127.0.0.2. */
  readonly source: string;
  /** Connections each port gets held (reopened after `reconnectMs` when closed). */
  readonly holders: number;
  /** Handshake loops per port. */
  readonly hammers: number;
  readonly seconds: number;
  readonly reconnectMs?: number;
  readonly hammerTimeoutMs?: number;
}

/** The attacker's own counts (its view, not the servers'). */
export interface AttackerStats {
  tcpOpenMax: number;
  tlsOpenMax: number;
  tcpConnects: number;
  reconnects: number;
  hammerAttempts: number;
  hammerCompleted: number;
  hammerTimeouts: number;
}

/** A running attacker process. */
export interface Attacker {
  /** Resolves with the counts when the attacker stops by itself. */
  readonly done: Promise<AttackerStats>;
  /** Stops it now (SIGTERM: it closes everything and prints its counts). */
  stop(): Promise<AttackerStats>;
  /** Last resort for cleanup. */
  kill(): void;
}

/** Spawns flood-attacker.mjs in its own process (so the test process's RSS is the servers'). */
export function startAttacker(options: AttackerOptions): Attacker {
  const opts = { reconnectMs: 250, hammerTimeoutMs: 2000, ...options };
  const child: ChildProcess = spawn(process.execPath, [join(import.meta.dirname, 'flood-attacker.mjs'), JSON.stringify(opts)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  // 'close', not 'exit': the figures line may still be in the pipe when the process has exited.
  const done = new Promise<AttackerStats>((resolveStats, reject) =>
    child.once('close', (code) => {
      const line = out.trim().split('\n').pop();
      try {
        if (!line) throw new Error('no output');
        resolveStats(JSON.parse(line) as AttackerStats);
      } catch (err) {
        reject(new Error(`attacker exited with ${String(code)} and no figures (${(err as Error).message})`));
      }
    }),
  );
  return {
    done,
    stop: () => (child.kill('SIGTERM'), done),
    kill: () => void child.kill('SIGKILL'),
  };
}

/** A server's admission counters at one moment. */
export interface Counters {
  readonly admitted: number;
  readonly refusals: Readonly<Record<string, number>>;
}

/** The counters of `creds` now. */
export function counters(creds: AtlsServerCredentials): Counters {
  return { admitted: creds.admitted, refusals: { ...creds.refusals } };
}

/** What a server handled between two snapshots: every handshake attempt is admitted or refused with a reason. */
export interface ServerFigures {
  admitted: number;
  refused: Record<string, number>;
  refusedTotal: number;
  handshakesPerSecond: number;
  refusedPerSecond: number;
}

/** The server's own figures between `before` and `after`, `seconds` apart. */
export function serverFigures(before: Counters, after: Counters, seconds: number): ServerFigures {
  const refused: Record<string, number> = {};
  for (const [reason, n] of Object.entries(after.refusals)) {
    const d = n - (before.refusals[reason] ?? 0);
    if (d > 0) refused[reason] = d;
  }
  const refusedTotal = Object.values(refused).reduce((a, b) => a + b, 0);
  const admitted = after.admitted - before.admitted;
  return { admitted, refused, refusedTotal, handshakesPerSecond: Math.round((admitted + refusedTotal) / seconds), refusedPerSecond: Math.round(refusedTotal / seconds) };
}

/** Peaks of the test process (which hosts the servers) while a phase runs. */
export interface Samples {
  /** Connections the servers tracked (admitted and not closed), per server. */
  trackedMax: number[];
  /** Open file descriptors (sockets, mostly) above the level before the phase. */
  fdsAboveBaselineMax: number;
  rssMiB: { before: number; peak: number; after: number };
}

const mib = (n: number) => Math.round(n / 2 ** 20);
const openFds = () => readdirSync('/proc/self/fd').length;

/** Samples the servers' tracked connections, open descriptors and RSS every `everyMs` until stopped. */
export function startSampler(creds: readonly AtlsServerCredentials[], everyMs = 250): { stop(): Samples } {
  const fds0 = openFds();
  const rss0 = process.memoryUsage().rss;
  const s = { tracked: creds.map(() => 0), fds: 0, rss: rss0 };
  const sample = () => {
    creds.forEach((c, i) => (s.tracked[i] = Math.max(s.tracked[i]!, c.connectionCount)));
    s.fds = Math.max(s.fds, openFds() - fds0);
    s.rss = Math.max(s.rss, process.memoryUsage().rss);
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return { trackedMax: s.tracked, fdsAboveBaselineMax: s.fds, rssMiB: { before: mib(rss0), peak: mib(s.rss), after: mib(process.memoryUsage().rss) } };
    },
  };
}

/** Polls `cond` every 100 ms; false when `timeoutMs` passed first. */
export async function waitFor(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

/** Runs `fn` and measures it in whole milliseconds. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await fn();
  return { value, ms: Math.round(performance.now() - t0) };
}

/** Writes the figures to .test-results/<name>.json at the workspace root (gitignored) and returns the path. */
export function writeFigures(name: string, figures: unknown): string {
  const root = process.env.ASTERISM_WORKSPACE ?? resolve(import.meta.dirname, '..', '..', '..');
  const dir = join(root, '.test-results');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.json`);
  writeFileSync(path, `${JSON.stringify(figures, null, 2)}\n`);
  return path;
}

/** One call as a real node makes it: fresh attempts (each with its own 10 s deadline) until one succeeds or `windowMs` is spent. */
export async function retried<T>(attempt: () => Promise<Outcome<T>>, windowMs: number, pauseMs = 500): Promise<{ value: Outcome<T>; ms: number; attempts: number; failures: string[] }> {
  const t0 = performance.now();
  const failures: string[] = [];
  for (;;) {
    const value = await attempt();
    const ms = Math.round(performance.now() - t0);
    if (value.ok || ms + pauseMs >= windowMs) return { value, ms, attempts: failures.length + 1, failures };
    failures.push(`${value.code}: ${value.details.slice(0, 80)}`);
    await new Promise((r) => setTimeout(r, pauseMs));
  }
}

/**
 * The kernel's count of connections dropped because a listen queue was full (TcpExt
 * ListenOverflows, all sockets of this network namespace). A connect flood that outruns the event
 * loop's accepts fills the queue; a legitimate peer's SYN is then dropped and resent 1 s, 3 s, 7 s
 * later, which is where multi-second join latencies under the flood come from.
 */
export function listenOverflows(): number | undefined {
  try {
    const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n').filter((l) => l.startsWith('TcpExt:'));
    const [names, values] = [lines[0]?.split(/\s+/) ?? [], lines[1]?.split(/\s+/) ?? []];
    const i = names.indexOf('ListenOverflows');
    return i > 0 ? Number(values[i]) : undefined;
  } catch {
    return undefined;
  }
}
