import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { QemuMetadataClient } from './qemu-client.js';
import { MetadataError } from './types.js';

describe('QemuMetadataClient against a local HTTP server', () => {
  let server: Server;
  let base: string;
  const routes: Record<string, { status: number; body: string }> = {
    '/self': { status: 200, body: JSON.stringify({ Name: 'control-plane0', ProviderID: 'qemu:///hostname/control-plane0', Role: 'ControlPlane', VPCIP: '10.42.1.1' }) },
    '/peers': {
      status: 200,
      body: JSON.stringify([
        { Name: 'control-plane0', Role: 'ControlPlane', VPCIP: '10.42.1.1', AliasIPRanges: null },
        { Name: 'worker0', Role: 'Worker', VPCIP: '10.42.2.1' },
      ]),
    },
    '/endpoint': { status: 200, body: '"10.42.1.1"' },
    '/initsecrethash': { status: 200, body: '$2a$10$abcdefghijklmnopqrstuu' },
  };

  before(async () => {
    server = createServer((req, res) => {
      const r = routes[req.url ?? ''] ?? { status: 404, body: 'No matching peer found' };
      res.writeHead(r.status).end(r.body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it('reads self, peers, endpoint and init secret hash', async () => {
    const c = new QemuMetadataClient(base);
    const self = await c.self();
    assert.equal(self.Name, 'control-plane0');
    assert.equal(self.Role, 'ControlPlane');
    assert.equal(self.AliasIPRanges, null);
    assert.deepEqual((await c.list()).map((i) => [i.Name, i.Role, i.VPCIP]), [
      ['control-plane0', 'ControlPlane', '10.42.1.1'],
      ['worker0', 'Worker', '10.42.2.1'],
    ]);
    assert.deepEqual(await c.getLoadBalancerEndpoint(), { host: '10.42.1.1', port: '6443' });
    assert.equal(await c.initSecretHash(), '$2a$10$abcdefghijklmnopqrstuu');
    assert.equal(await c.uid(), '');
  });

  it('turns a 404 into METADATA_NOT_FOUND instead of decoding the page', async () => {
    routes['/self'] = { status: 404, body: 'No matching peer found' };
    await assert.rejects(new QemuMetadataClient(base).self(), (e: unknown) => e instanceof MetadataError && e.code === 'METADATA_NOT_FOUND');
  });

  it('turns a 500 into METADATA_UNAVAILABLE and garbage into METADATA_MALFORMED', async () => {
    routes['/peers'] = { status: 500, body: 'boom' };
    await assert.rejects(new QemuMetadataClient(base).list(), (e: unknown) => e instanceof MetadataError && e.code === 'METADATA_UNAVAILABLE');
    routes['/endpoint'] = { status: 200, body: '{"not":"a string"}' };
    await assert.rejects(new QemuMetadataClient(base).getLoadBalancerEndpoint(), (e: unknown) => e instanceof MetadataError && e.code === 'METADATA_MALFORMED');
    routes['/peers'] = { status: 200, body: '[{"Name": 5}]' };
    await assert.rejects(new QemuMetadataClient(base).list(), (e: unknown) => e instanceof MetadataError && e.code === 'METADATA_MALFORMED');
  });

  it('reports an unreachable server as METADATA_UNAVAILABLE', async () => {
    await assert.rejects(new QemuMetadataClient('http://127.0.0.1:1').self(), (e: unknown) => e instanceof MetadataError && e.code === 'METADATA_UNAVAILABLE');
  });
});
