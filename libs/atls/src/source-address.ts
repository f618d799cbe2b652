import * as net from 'node:net';
import { AtlsError } from './errors.js';

/**
 * grpc-js opens the TCP connection itself and cannot bind a local address. A peer whose identity
 * the server derives from the connection's source address (docs/adr/0008: the local cluster's
 * nodes share one loopback interface, so without this every node would connect from 127.0.0.1)
 * therefore re-dials the same server from `localAddress` and closes grpc-js' socket, which has sent
 * no byte yet. Resolves with `socket` itself when it already uses `localAddress`.
 */
export function fromSourceAddress(socket: net.Socket, localAddress: string, timeoutMs: number): Promise<net.Socket> {
  if (normalizeAddress(socket.localAddress) === normalizeAddress(localAddress)) return Promise.resolve(socket);
  const host = socket.remoteAddress;
  const port = socket.remotePort;
  socket.destroy();
  if (!host || !port) return Promise.reject(new AtlsError('DIAL_FAILED', 'cannot re-dial from the source address: the connection has no remote address'));
  return new Promise<net.Socket>((resolve, reject) => {
    const s = net.connect({ host, port, localAddress });
    const fail = (err: Error) => {
      clearTimeout(timer);
      s.destroy();
      reject(new AtlsError('DIAL_FAILED', `connecting to ${host}:${port} from ${localAddress}: ${err.message}`, { cause: err, details: { localAddress } }));
    };
    const timer = setTimeout(() => fail(new Error(`no connection within ${timeoutMs} ms`)), timeoutMs);
    s.once('error', fail);
    s.once('connect', () => {
      clearTimeout(timer);
      s.removeListener('error', fail);
      s.setNoDelay(true); // as grpc-js sets it on the sockets it opens
      resolve(s);
    });
  });
}

/** `::ffff:127.0.0.2` and `127.0.0.2` are the same IPv4 peer. */
export function normalizeAddress(address: string | undefined): string {
  if (!address) return '';
  return address.startsWith('::ffff:') && net.isIPv4(address.slice(7)) ? address.slice(7) : address;
}
