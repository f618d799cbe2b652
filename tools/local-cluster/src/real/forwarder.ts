/**
 * A loopback port on the host that reaches a service inside the private network
 * (docs/adr/0019-node-runtime.md): socat on the host (127.0.0.1:<port> -> a Unix socket in the
 * cluster folder) and socat in the router namespace (that socket -> <ip>:<port>). The host's own
 * network namespace never gets a route or address of the private network.
 */
import { existsSync } from 'node:fs';
import { startDetached } from '../detached.js';
import { NETWORK } from './network.js';

/** One forwarded port. */
export interface Forward {
  name: string;
  hostPort: number;
  target: string;
  pids: number[];
}

/** Starts both halves; resolves when the host side listens. */
export async function startForward(o: { name: string; hostPort: number; target: string; socket: string; log: string }): Promise<Forward> {
  const inner = startDetached(`${o.name}-router`, 'nsenter', [`--net=/run/netns/${NETWORK.routerNamespace}`, 'socat', `UNIX-LISTEN:${o.socket},fork,mode=600,unlink-early`, `TCP:${o.target}`], o.log);
  for (let i = 0; i < 100 && !existsSync(o.socket); i++) await new Promise((r) => setTimeout(r, 20));
  if (!existsSync(o.socket)) throw new Error(`forwarder ${o.name} did not create ${o.socket} (see ${o.log})`);
  const outer = startDetached(`${o.name}-host`, 'socat', [`TCP-LISTEN:${o.hostPort},bind=127.0.0.1,fork,reuseaddr`, `UNIX-CONNECT:${o.socket}`], o.log);
  return { name: o.name, hostPort: o.hostPort, target: o.target, pids: [inner.pid, outer.pid] };
}
