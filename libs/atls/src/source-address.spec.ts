import assert from 'node:assert/strict';
import * as net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { AtlsError } from './errors.js';
import { fromSourceAddress, normalizeAddress } from './source-address.js';

describe('fromSourceAddress (loopback TCP server)', () => {
  let server: net.Server;
  let port: number;
  const seen: string[] = [];
  before(async () => {
    server = net.createServer((s) => {
      seen.push(normalizeAddress(s.remoteAddress));
      s.on('error', () => undefined);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as net.AddressInfo).port;
  });
  after(() => server.close());

  const connect = () =>
    new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(s));
      s.once('error', reject);
    });

  it('re-dials the same server from the requested address and closes the original socket', async () => {
    const original = await connect();
    const s = await fromSourceAddress(original, '127.0.0.9', 2000);
    assert.notEqual(s, original);
    assert.equal(s.localAddress, '127.0.0.9');
    assert.equal(s.remotePort, port);
    assert.ok(original.destroyed);
    s.destroy();
    assert.equal(seen.at(-1), '127.0.0.9');
  });

  it('keeps a socket that already uses the address', async () => {
    const original = await connect();
    assert.equal(await fromSourceAddress(original, '127.0.0.1', 2000), original);
    original.destroy();
  });

  it('an address this host does not have is a typed, retryable DIAL_FAILED', async () => {
    const original = await connect();
    await assert.rejects(fromSourceAddress(original, '192.0.2.1', 2000), (e: unknown) => e instanceof AtlsError && e.code === 'DIAL_FAILED' && e.retryable);
  });
});
