import { connect } from 'node:net';
import { sleep } from './backoff.js';

/** Tells whether a joinservice endpoint (`host:port`, `[v6]:port`) accepts connections now. */
export interface ReadinessProbe {
  reachable(endpoint: string, signal?: AbortSignal): Promise<boolean>;
}

/** Splits `host:port` / `[v6]:port`. */
function hostPort(endpoint: string): { host: string; port: number } {
  const m = /^\[(.+)\]:(\d+)$/.exec(endpoint) ?? /^([^:]+):(\d+)$/.exec(endpoint);
  if (!m) throw new Error(`endpoint ${JSON.stringify(endpoint)} is not host:port`);
  return { host: m[1]!, port: Number(m[2]) };
}

/**
 * A TCP connect, closed at once: the cheapest sign that a joinservice listens. It sends no
 * ClientHello, so the joinservice's aTLS admission (docs/adr/0007) never counts it, and no TPM
 * quote is made for it.
 */
export class TcpReadinessProbe implements ReadinessProbe {
  constructor(private readonly timeoutMs = 500) {}

  reachable(endpoint: string, signal?: AbortSignal): Promise<boolean> {
    const { host, port } = hostPort(endpoint);
    return new Promise((resolve) => {
      const socket = connect({ host, port });
      const done = (ok: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        socket.destroy();
        resolve(ok);
      };
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), this.timeoutMs);
      socket.once('connect', () => done(true));
      socket.once('error', () => done(false));
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** Options of {@link waitForReachable}. */
export interface ReachableOptions {
  /** Mean pause between probe rounds; each pause is uniform in [0.5, 1.5] x this. Default 100 ms. */
  intervalMs?: number;
  /** How often the endpoint list is read again (metadata) while nothing answers. Default 1 s. */
  relistMs?: number;
  random?: () => number;
}

/**
 * Probes the listed endpoints (all at once) until at least one accepts a connection and returns
 * those that did; `undefined` once `signal` aborts. Replaces a blind backoff sleep while no
 * joinservice is up: a node learns within about `intervalMs` that one is, and the jitter keeps
 * many waiting nodes from probing in lockstep.
 */
export async function waitForReachable(list: () => Promise<string[]>, probe: ReadinessProbe, signal: AbortSignal, o: ReachableOptions = {}): Promise<string[] | undefined> {
  const intervalMs = o.intervalMs ?? 100;
  const relistMs = o.relistMs ?? 1000;
  const random = o.random ?? Math.random;
  let endpoints: string[] = [];
  let listedAt = -Infinity;
  for (;;) {
    if (signal.aborted) return undefined;
    if (performance.now() - listedAt >= relistMs) {
      endpoints = await list();
      listedAt = performance.now();
    }
    const answers = await Promise.all(endpoints.map(async (e) => ((await probe.reachable(e, signal)) ? e : undefined)));
    const up = answers.filter((e): e is string => e !== undefined);
    if (up.length > 0) return up;
    if (!(await sleep(Math.round(intervalMs * (0.5 + random())), signal))) return undefined;
  }
}
