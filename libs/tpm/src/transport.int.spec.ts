import assert from 'node:assert/strict';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { missingComponent } from '@asterism/testing';
import { TpmClient } from './client.js';
import { TPM_ALG } from './constants.js';
import { TpmTransportError } from './errors.js';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT } from './testing/swtpm.fixture.js';
import { SocketTransport } from './transport.js';

const skip = swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT);

/** A loopback TCP proxy to swtpm's Unix socket that delivers every response one byte at a time. */
async function fragmentingProxy(unixPath: string): Promise<{ server: Server; port: number; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createServer((client) => {
    const upstream = createConnection({ path: unixPath });
    sockets.push(client, upstream);
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', async (d: Buffer) => {
      for (const b of d) {
        client.write(Buffer.from([b]));
        await new Promise((r) => setImmediate(r));
      }
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as { port: number }).port, sockets };
}

describe('SocketTransport over TCP', { skip }, () => {
  it('reassembles fragmented responses and reports a closed peer as a transport error', async () => {
    const tpm = await startSwtpm();
    await tpm.disconnect();
    const proxy = await fragmentingProxy(tpm.socketPath);
    try {
      const c = new TpmClient(await SocketTransport.connect({ host: '127.0.0.1', port: proxy.port }));
      const values = await c.pcrRead(undefined, TPM_ALG.SHA384);
      assert.equal(values.size, 24);
      assert.equal(values.get(0)!.length, 48);
      for (const s of proxy.sockets) s.destroy();
      await assert.rejects(c.pcrRead([0]), TpmTransportError);
      await c.transport.close();
    } finally {
      proxy.server.close();
      await tpm.stop();
    }
  });

  it('fails to connect with a transport error naming the address', async () => {
    await assert.rejects(SocketTransport.connect({ path: '/nonexistent/tpm.sock' }), (e: unknown) => e instanceof TpmTransportError && /\/nonexistent\/tpm.sock/.test(e.message));
  });
});
