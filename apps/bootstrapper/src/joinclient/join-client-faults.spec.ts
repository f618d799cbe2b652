import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DummyIssuer } from '@asterism/attestation';
import { startFaultServer, type Fault } from '@asterism/atls/testing';
import { createNopLogger } from '@asterism/logger';
import type { InstanceMetadata, MetadataProvider } from '@asterism/metadata';
import { NodeLock } from '@asterism/nodelock';
import { NodeFileWriter } from '../state/file-writer.js';
import { AtlsJoinServiceDialer } from './atls-dialer.js';
import { Backoff } from './backoff.js';
import { TcpReadinessProbe } from './readiness-probe.js';
import { JoinClient } from './join-client.js';

// The JoinClient dials real misbehaving servers through the real aTLS dialer. Before the fix a
// server that required a client certificate (or reset after the handshake) crashed the process
// with an unhandled 'error' event within a few seconds; now every attempt fails typed and the
// loop keeps trying.

const me: InstanceMetadata = { Name: 'worker-0', Role: 'Worker', VPCIP: '127.0.0.1', ProviderID: '', SecondaryIPRange: '', AliasIPRanges: null };
const metadata: MetadataProvider = {
  self: async () => me,
  list: async () => [me, { ...me, Name: 'control-plane-0', Role: 'ControlPlane' }],
  getLoadBalancerEndpoint: async () => ({ host: '', port: '6443' }),
  initSecretHash: async () => '',
  uid: async () => '',
};

function joinClientFor(port: number) {
  const unused = async (): Promise<never> => assert.fail('a join must not get this far');
  return new JoinClient(
    {
      lock: new NodeLock({ markNodeAsBootstrapped: unused }),
      dialer: new AtlsJoinServiceDialer(new DummyIssuer()),
      metadata,
      disk: { uuid: async () => 'abcdef01-0000-4000-8000-000000000000', updatePassphrase: unused, markForReset: unused },
      files: new NodeFileWriter(mkdtempSync(join(tmpdir(), 'joinfaults-'))),
      host: { addresses: async () => ['127.0.0.1'], hostname: async () => 'worker-0' },
      hostKey: { publicKeyWire: async () => Buffer.from('wire') },
      csr: { create: async () => ({ csrDer: Buffer.from('csr'), privateKeyPem: '' }) },
      probe: new TcpReadinessProbe(),
      cluster: { joinCluster: unused },
      onLocked: () => assert.fail('must not lock'),
      logger: createNopLogger(),
    },
    { joinServicePort: port, rpcTimeoutMs: 2000, backoff: new Backoff(20, 50, 0) },
  );
}

const cases: [string, Fault][] = [
  ['requires a client certificate (TLS alert after the handshake)', { phase: 'after-handshake', action: 'alert' }],
  ['resets the connection right after the handshake', { phase: 'after-handshake', action: 'reset', delayMs: 2 }],
  ['closes the connection on the ClientHello', { phase: 'accept', action: 'close' }],
];

describe('JoinClient against misbehaving joinservice endpoints', () => {
  for (const [name, fault] of cases) {
    it(`keeps retrying a server that ${name}`, async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (err: unknown) => unhandled.push(err);
      process.on('uncaughtException', onUnhandled);
      const server = await startFaultServer(fault);
      const client = joinClientFor(server.port);
      try {
        let settled = false;
        const running = client.start().finally(() => (settled = true));
        const deadline = Date.now() + 10_000;
        while (server.accepted() < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        assert.ok(server.accepted() >= 5, `only ${server.accepted()} attempts`);
        assert.equal(settled, false, 'the JoinClient gave up');
        await client.stop();
        assert.equal(await running, 'stopped');
        assert.deepEqual(unhandled, []);
      } finally {
        process.off('uncaughtException', onUnhandled);
        await client.stop();
        await server.close();
      }
    });
  }
});
