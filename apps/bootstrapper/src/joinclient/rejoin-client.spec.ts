import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deriveClusterId } from '@asterism/crypto';
import { createLogger } from '@asterism/logger';
import type { InstanceMetadata, MetadataProvider } from '@asterism/metadata';
import type { NodeLock } from '@asterism/nodelock';
import { Backoff } from './backoff.js';
import { JoinClientError } from './join-client.js';
import type { JoinServiceDialer } from './ports.js';
import { RejoinClient } from './rejoin-client.js';

const logger = createLogger({ component: 'test', level: 'error' });
const cp: InstanceMetadata = { Name: 'control-plane-0', ProviderID: '', Role: 'ControlPlane', VPCIP: '10.0.0.1', SecondaryIPRange: '', AliasIPRanges: null };
const worker: InstanceMetadata = { ...cp, Name: 'worker-0', Role: 'Worker', VPCIP: '10.0.0.2' };
const metadata: MetadataProvider = {
  self: async () => worker,
  list: async () => [cp, worker],
  getLoadBalancerEndpoint: async () => ({ host: '', port: '6443' }),
  initSecretHash: async () => '',
  uid: async () => '',
};
const diskKey = Buffer.alloc(32, 0xd1);
const secret = Buffer.alloc(32, 0x5e);
const salt = Buffer.alloc(32, 0x5a);

function setup(opts: { failures: number; key?: Buffer }) {
  const calls: string[] = [];
  const locks: Buffer[] = [];
  const opened: Buffer[] = [];
  const dialer: JoinServiceDialer = {
    issueJoinTicket: async () => assert.fail('a rejoin never asks for a join ticket'),
    issueRejoinTicket: async (endpoint, req) => {
      calls.push(`${endpoint} ${req.diskUuid}`);
      if (calls.length <= opts.failures) throw new Error('unavailable');
      return { stateDiskKey: opts.key ?? diskKey, measurementSecret: secret };
    },
  };
  const lock = { tryLockOnce: async (id: Buffer) => (locks.push(id), 'acquired') } as unknown as NodeLock;
  const client = new RejoinClient(
    { dialer, probe: { reachable: async () => true }, metadata, lock, openState: async (key) => (opened.push(Buffer.from(key)), salt), logger, disk: { uuid: async () => 'abcd-uuid', testPassphrase: async (p) => Buffer.from(p).equals(diskKey) } },
    { backoff: new Backoff(1, 2, 1), reachable: { intervalMs: 1, relistMs: 0 } },
  );
  return { client, calls, locks, opened };
}

describe('RejoinClient', () => {
  it('retries until a joinservice answers, then re-marks the node with the re-derived cluster ID', async () => {
    const { client, calls, locks, opened } = setup({ failures: 2 });
    const id = await client.run();
    // The node state (its salt) is read only after the ticket's key opened the disk (docs/adr/0041).
    assert.deepEqual(opened, [diskKey]);
    assert.deepEqual(id, deriveClusterId(secret, salt));
    assert.deepEqual(locks, [deriveClusterId(secret, salt)]);
    assert.deepEqual(calls, ['10.0.0.1:30090 abcd-uuid', '10.0.0.1:30090 abcd-uuid', '10.0.0.1:30090 abcd-uuid']);
  });

  it('refuses a ticket whose disk key does not open the state disk, without marking the node', async () => {
    const { client, locks, opened } = setup({ failures: 0, key: Buffer.alloc(32, 1) });
    await assert.rejects(client.run(), (e: unknown) => e instanceof JoinClientError && e.code === 'TICKET_INVALID');
    assert.equal(locks.length, 0);
    assert.equal(opened.length, 0, 'a key that does not open the disk never reaches the disk mapper');
  });

  it('stops cleanly while no joinservice answers', async () => {
    const { client, locks } = setup({ failures: Infinity });
    const run = client.run();
    setTimeout(() => client.stop(), 20);
    assert.equal(await run, 'stopped');
    assert.equal(locks.length, 0);
  });
});
