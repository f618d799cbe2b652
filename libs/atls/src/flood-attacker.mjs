// Test-only attacker process of flood.int.spec.ts: plain Node, no project code, loopback only,
// bounded in time. One JSON argument:
//   { ports, source, holders, hammers, seconds, reconnectMs, hammerTimeoutMs }
// - holders (per port): open a TCP connection from `source`, send a ClientHello (SNI = a base64
//   nonce, ALPN h2), complete the TLS handshake when the server lets it, then idle; when the
//   server closes it (refused or reaped), reconnect after reconnectMs.
// - hammers (per port): loops of TLS handshakes that close as soon as they finish (or fail).
// It stops after `seconds` (or on SIGTERM) and prints one JSON line with its counts.
import * as net from 'node:net';
import * as tls from 'node:tls';

const opts = JSON.parse(process.argv[2]);
const until = Date.now() + opts.seconds * 1000;
let stopping = false;
const stats = { tcpOpen: 0, tcpOpenMax: 0, tlsOpen: 0, tlsOpenMax: 0, tcpConnects: 0, reconnects: 0, hammerAttempts: 0, hammerCompleted: 0, hammerTimeouts: 0 };
const sni = Buffer.alloc(32, 7).toString('base64');
// One client context for every connection: tls.connect without one builds a context per call
// (root store included), which blocked this process for seconds when 4,000 connects completed at once.
const secureContext = tls.createSecureContext({});
const sockets = new Set();

function hold(port) {
  if (stopping || Date.now() > until) return;
  const raw = net.connect({ host: '127.0.0.1', port, localAddress: opts.source });
  sockets.add(raw);
  let connected = false;
  let secure = false;
  raw.on('error', () => undefined);
  raw.on('connect', () => {
    connected = true;
    stats.tcpConnects++;
    stats.tcpOpenMax = Math.max(stats.tcpOpenMax, ++stats.tcpOpen);
    const t = tls.connect({ socket: raw, servername: sni, ALPNProtocols: ['h2'], rejectUnauthorized: false, secureContext });
    t.on('error', () => undefined);
    t.on('secureConnect', () => {
      secure = true;
      stats.tlsOpenMax = Math.max(stats.tlsOpenMax, ++stats.tlsOpen);
    });
  });
  raw.on('close', () => {
    sockets.delete(raw);
    if (connected) stats.tcpOpen--;
    if (secure) stats.tlsOpen--;
    if (stopping) return;
    stats.reconnects++;
    setTimeout(() => hold(port), opts.reconnectMs);
  });
}

function handshakeOnce(port) {
  return new Promise((resolve) => {
    const t = tls.connect({ host: '127.0.0.1', port, localAddress: opts.source, servername: sni, ALPNProtocols: ['h2'], rejectUnauthorized: false, secureContext });
    sockets.add(t);
    const done = () => (sockets.delete(t), t.destroy(), resolve());
    t.on('secureConnect', () => (stats.hammerCompleted++, done()));
    t.on('error', done);
    t.on('close', done);
    t.setTimeout(opts.hammerTimeoutMs, () => (stats.hammerTimeouts++, done()));
  });
}

async function hammer(port) {
  while (!stopping && Date.now() < until) {
    stats.hammerAttempts++;
    await handshakeOnce(port);
  }
}

function finish() {
  if (stopping) return;
  stopping = true;
  for (const s of sockets) s.destroy();
  process.stdout.write(`${JSON.stringify(stats)}\n`, () => process.exit(0));
}

process.on('SIGTERM', finish);
// A hammer loop stuck in a handshake is bounded by hammerTimeoutMs; this bounds everything else.
setTimeout(finish, opts.seconds * 1000 + opts.hammerTimeoutMs + 1000).unref();
for (const port of opts.ports) for (let i = 0; i < opts.holders; i++) hold(port);
await Promise.all(opts.ports.flatMap((port) => Array.from({ length: opts.hammers }, () => hammer(port))));
await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now())));
finish();
