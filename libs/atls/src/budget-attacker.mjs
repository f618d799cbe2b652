// Test-only attacker process of attestation-budget.int.spec.ts: plain Node, no project code,
// loopback only, bounded in time. One JSON argument: { port, addresses, loopsPerAddress, seconds,
// certPem, keyPem }. Each loop opens TLS connections from its address presenting one fixed client
// certificate that carries an attestation document over someone else's nonce (reference-style
// client attestation): the server validates it after every handshake and rejects it. A connection
// is held until the server closes it or for 200 ms, then the loop starts the next one. It stops
// after `seconds` and prints one JSON line with its counts.
import * as tls from 'node:tls';

const opts = JSON.parse(process.argv[2]);
const until = Date.now() + opts.seconds * 1000;
const stats = { attempts: 0, handshakes: 0, failed: 0 };
const secureContext = tls.createSecureContext({ cert: opts.certPem, key: opts.keyPem });
const sni = Buffer.alloc(32, 9).toString('base64');

function once(address) {
  return new Promise((resolve) => {
    stats.attempts++;
    const t = tls.connect({ host: '127.0.0.1', port: opts.port, localAddress: address, servername: sni, ALPNProtocols: ['h2'], rejectUnauthorized: false, secureContext });
    const done = () => (t.destroy(), resolve());
    t.on('secureConnect', () => (stats.handshakes++, setTimeout(done, 200)));
    t.on('error', () => (stats.failed++, done()));
    t.on('close', done);
    t.setTimeout(3000, done);
  });
}

async function loop(address) {
  while (Date.now() < until) await once(address);
}

setTimeout(() => process.exit(0), opts.seconds * 1000 + 5000).unref();
await Promise.all(opts.addresses.flatMap((a) => Array.from({ length: opts.loopsPerAddress }, () => loop(a))));
process.stdout.write(`${JSON.stringify(stats)}\n`, () => process.exit(0));
