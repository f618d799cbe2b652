import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { after, describe, it } from 'node:test';
import bcrypt from 'bcryptjs';
import * as grpc from '@grpc/grpc-js';
import { deriveClusterId, encodeClusterKmsUri, ClusterKms } from '@asterism/crypto';
import { createNopLogger } from '@asterism/logger';
import { NodeLock } from '@asterism/nodelock';
import { init } from '@asterism/proto';
import { PeerRateLimiter, REASON_METADATA } from '@asterism/service-runtime';
import type { StateDisk } from '../disk/state-disk.js';
import { NodeFileWriter } from '../state/file-writer.js';
import { NODE_STATE_PATH } from '../state/node-state.js';
import { DiskBindingError } from '../node-identity/init-disk-binding.js';
import { chunkLogs, InitFlow, initSecretMatches, type InitFlowDeps } from './init-flow.js';
import { InitServer } from './init-server.js';

const HASH = bcrypt.hashSync('password', 4);
const master = { key: Buffer.alloc(32, 0), salt: Buffer.alloc(32, 1) };
const servers: InitServer[] = [];
after(async () => {
  for (const s of servers) s.server.forceShutdown();
});

class StubDisk implements StateDisk {
  passphrase: Buffer | undefined;
  constructor(private readonly fail?: 'uuid' | 'passphrase') {}
  async uuid() {
    if (this.fail === 'uuid') throw new Error('no uuid');
    return '00000000-0000-0000-0000-000000000000';
  }
  async updatePassphrase(p: Uint8Array) {
    if (this.fail === 'passphrase') throw new Error('keyslot change failed');
    this.passphrase = Buffer.from(p);
  }
  resets = 0;
  async markForReset() {
    this.resets++;
  }
}

function setup(over: Partial<InitFlowDeps> = {}, opts: { logs?: Buffer; attempts?: PeerRateLimiter } = {}) {
  const marks: Buffer[] = [];
  const lock = new NodeLock({ markNodeAsBootstrapped: async (id) => void marks.push(Buffer.from(id)) });
  let locked = 0;
  const sshCalls: Array<{ seed: Buffer; principals: string[] }> = [];
  const disk = new StubDisk();
  const root = mkdtempSync(join(tmpdir(), 'init-'));
  const deps: InitFlowDeps = {
    initSecretHash: HASH,
    lock,
    disk,
    files: new NodeFileWriter(root),
    ssh: { install: async (seed, principals) => void sshCalls.push({ seed, principals }) },
    host: { addresses: async () => ['192.0.2.10'], hostname: async () => 'node-0' },
    cluster: { initCluster: async (req) => Buffer.from(`kubeconfig for ${req.clusterName}`) },
    identity: { read: async () => ({ name: 'control-plane-0', role: 'ControlPlane', ip: '192.0.2.10', providerId: '' }) },
    diskBinding: { bind: async () => 'created' },
    onLocked: () => void locked++,
    logger: createNopLogger(),
    ...over,
  };
  const logs = opts.logs ?? Buffer.from('asdf');
  const server = new InitServer(new InitFlow(deps), { read: async function* () { yield logs; } }, createNopLogger(), {}, { secretAttempts: opts.attempts });
  servers.push(server);
  return { deps, server, marks, sshCalls, disk, root, lockedCount: () => locked };
}

const request = (over: Partial<init.InitRequest> = {}): init.InitRequest => ({
  kmsUri: encodeClusterKmsUri(master),
  storageUri: 'storage://no-store',
  measurementSalt: Buffer.alloc(32, 2),
  kubernetesVersion: 'v1.34.2',
  conformanceMode: false,
  kubernetesComponents: [],
  initSecret: Buffer.from('password'),
  clusterName: '',
  apiserverCertSans: ['203.0.113.7'],
  serviceCidr: '',
  ...over,
});

async function callInit(server: InitServer, req: init.InitRequest) {
  const port = await server.listen('127.0.0.1:0', grpc.ServerCredentials.createInsecure());
  const client = new init.APIClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const messages: init.InitResponse[] = [];
  const status = await new Promise<grpc.StatusObject | grpc.ServiceError>((resolve) => {
    const stream = client.init(req);
    stream.on('data', (m: init.InitResponse) => messages.push(m));
    stream.on('error', (e: grpc.ServiceError) => resolve(e));
    stream.on('status', (s: grpc.StatusObject) => {
      if (s.code === grpc.status.OK) resolve(s);
    });
  });
  client.close();
  return { messages, code: status.code, details: status.details, reason: status.metadata?.get(REASON_METADATA)[0] };
}

describe('InitServer (TestInit)', () => {
  it('initialises: success message only, lock held with the derived cluster ID, JoinClient stopped', async () => {
    const s = setup();
    const { messages, code } = await callInit(s.server, request());
    assert.equal(code, grpc.status.OK);
    assert.equal(messages.length, 1);
    assert.equal(messages[0]?.initSuccess?.kubeconfig.toString(), 'kubeconfig for constellation');
    const expectedId = deriveClusterId(new ClusterKms(master).getDek('key-measurementSecret', 32), Buffer.alloc(32, 2));
    assert.equal(messages[0]?.initSuccess?.clusterId.toString('hex'), 'fdb2f1753774fc73773199fc65f3df9c803176ccb88c9851ba73a3de276cddc8');
    assert.deepEqual(s.marks, [expectedId]);
    assert.equal(s.lockedCount(), 1);
    assert.equal(s.disk.passphrase?.toString('hex'), 'cafa93353ca216e2a84aa958f9126808bcfff0f6c32187710fb583caa1c70b64');
    assert.equal(s.sshCalls[0]?.seed.toString('hex'), '3dcce96e5c53e7f1696aca1cd27ed294d0f545b6384abf5fe6fc1ed53980268c');
    assert.deepEqual(s.sshCalls[0]?.principals, ['192.0.2.10', 'node-0', '203.0.113.7']);
    assert.deepEqual(s.server.outcome, { kind: 'succeeded' });
  });

  it('reads the node identity once and hands it to the node runtime and the disk binding', async () => {
    let reads = 0;
    const node = { name: 'control-plane-0', role: 'ControlPlane' as const, ip: '10.0.0.1', providerId: 'qemu:///cp0' };
    const seen: { runtime?: unknown; bindingName?: string } = {};
    const s = setup({
      identity: { read: async () => (reads++, node) },
      cluster: { initCluster: async (req) => ((seen.runtime = req.node), Buffer.from('kc')) },
      diskBinding: { bind: async (req) => ((seen.bindingName = req.nodeName), 'created') },
    });
    const { code } = await callInit(s.server, request());
    assert.equal(code, grpc.status.OK);
    assert.equal(reads, 1);
    assert.deepEqual(seen, { runtime: node, bindingName: 'control-plane-0' });
  });

  it('refuses a second init with FailedPrecondition and streams the failure and logs', async () => {
    const s = setup();
    await s.deps.lock.tryLockOnce(Buffer.from([9]), 'join');
    const { messages, code, details, reason } = await callInit(s.server, request());
    assert.equal(code, grpc.status.FAILED_PRECONDITION);
    assert.equal(details, 'node is already being activated');
    assert.equal(reason, 'ALREADY_ACTIVATING');
    assert.equal(messages[0]?.initFailure?.error, 'rpc error: code = FailedPrecondition desc = node is already being activated');
    assert.equal(messages[1]?.log?.log.toString(), 'asdf');
    assert.equal(s.lockedCount(), 0, 'no shutdown requested');
  });

  it('refuses a wrong init secret with PermissionDenied before taking the lock, and sends no logs', async () => {
    const s = setup();
    const { messages, code } = await callInit(s.server, request({ initSecret: Buffer.from('wrong') }));
    assert.equal(code, grpc.status.PERMISSION_DENIED);
    assert.match(messages[0]?.initFailure?.error ?? '', /invalid init secret/);
    assert.equal(messages.length, 1, 'the node log is only for callers who know the init secret');
    assert.equal(s.deps.lock.locked, false);
  });

  it('rate limits wrong init secrets per address (ResourceExhausted before bcrypt); a right secret gives its token back', async () => {
    let now = 0;
    const s = setup({}, { attempts: new PeerRateLimiter(0.5, 3, 100, () => now) });
    const right = request();
    const wrong = request({ initSecret: Buffer.from('wrong') });
    const { OK, PERMISSION_DENIED: PD, RESOURCE_EXHAUSTED: RE, FAILED_PRECONDITION: FP } = grpc.status;
    const steps: [string, init.InitRequest, grpc.status, number?][] = [
      ['right secret', right, OK],
      ['wrong 1', wrong, PD],
      ['wrong 2', wrong, PD],
      ['wrong 3', wrong, PD],
      ['wrong 4: over the budget', wrong, RE],
      ['right secret while blocked', right, RE],
      ['right secret 2 s later (node already locked)', right, FP, 2000],
      ['wrong after the refund', wrong, PD],
      ['wrong again', wrong, RE],
    ];
    for (const [name, req, want, at] of steps) {
      if (at !== undefined) now = at;
      const { code, details, messages, reason } = await callInit(s.server, req);
      assert.equal(code, want, `${name}: ${details}`);
      if (code === RE) {
        assert.match(details, /too many failed init attempts from this address; retry in \d+ s/);
        assert.equal(reason, 'TOO_MANY_ATTEMPTS');
        assert.equal(messages.length, 0);
      }
    }
    assert.equal(s.server.refusedAttempts, 3);
  });

  it('a flood of wrong secrets from one address gets 5 PermissionDenied, then cheap ResourceExhausted without logs', async () => {
    // The default budget (5 at once, one more every 2 s) on a frozen clock: on a loaded machine the
    // 200 calls take over 2 s, and a refilled token made it 6 PermissionDenied.
    const s = setup({}, { logs: Buffer.alloc(256 * 1024, 0x61), attempts: new PeerRateLimiter(0.5, 5, 10_000, () => 0) });
    const port = await s.server.listen('127.0.0.1:0', grpc.ServerCredentials.createInsecure());
    const client = new init.APIClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    let bytes = 0;
    const codes = new Map<grpc.status, number>();
    for (let i = 0; i < 200; i++) {
      const code = await new Promise<grpc.status>((resolve) => {
        const st = client.init(request({ initSecret: Buffer.from(`wrong-${i}`) }));
        st.on('data', (m: init.InitResponse) => (bytes += init.InitResponse.encode(m).finish().length));
        st.on('error', (e: grpc.ServiceError) => resolve(e.code));
      });
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    client.close();
    assert.deepEqual(Object.fromEntries(codes), { [grpc.status.PERMISSION_DENIED]: 5, [grpc.status.RESOURCE_EXHAUSTED]: 195 });
    assert.equal(s.server.refusedAttempts, 195);
    assert.ok(bytes < 1000, `${bytes} bytes streamed to a caller without the init secret`);
    assert.equal(s.deps.lock.locked, false);
  });

  const invalid: [string, Partial<init.InitRequest>, RegExp][] = [
    ['unknown KMS', { kmsUri: 'kms://unknown' }, /unknown KMS/],
    ['unsupported storage', { storageUri: 'storage://aws?bucket=b&region=r&accessKeyID=a&accessKey=k' }, /storage backend aws/],
    ['KMS URI without salt', { kmsUri: 'kms://cluster-kms?key=AA==' }, /salt/],
    ['1-byte master secret and salt', { kmsUri: encodeClusterKmsUri({ key: Buffer.alloc(1), salt: Buffer.alloc(1) }) }, /master secret is 1 bytes/],
    ['15-byte master secret', { kmsUri: encodeClusterKmsUri({ key: Buffer.alloc(15), salt: Buffer.alloc(32) }) }, /master secret is 15 bytes/],
    ['31-byte master salt', { kmsUri: encodeClusterKmsUri({ key: Buffer.alloc(16), salt: Buffer.alloc(31) }) }, /salt is 31 bytes/],
    ['oversized measurement salt', { measurementSalt: Buffer.alloc(1025) }, /measurement salt/],
    ['SAN with a path', { apiserverCertSans: ['../../etc'] }, /SAN/],
    ['SAN with a newline', { apiserverCertSans: ['a.example\nb'] }, /SAN/],
    ['service CIDR that is not one', { serviceCidr: '10.96.0.0/33' }, /service CIDR/],
  ];
  for (const [name, over, message] of invalid) {
    it(`rejects ${name} with InvalidArgument before the lock and before any key derivation`, async () => {
      const s = setup();
      const { code, details } = await callInit(s.server, request(over));
      assert.equal(code, grpc.status.INVALID_ARGUMENT, details);
      assert.match(details, message);
      assert.equal(s.deps.lock.locked, false);
      assert.equal(s.lockedCount(), 0);
      assert.equal(s.disk.passphrase, undefined);
    });
  }

  it('accepts IPv6 SANs, wildcard DNS names and an IPv6 service CIDR', async () => {
    const s = setup();
    const { code } = await callInit(s.server, request({ apiserverCertSans: ['2001:db8::1', '*.example.com', 'api.example.com', ''], serviceCidr: 'fd00::/108' }));
    assert.equal(code, grpc.status.OK);
  });

  const afterLock: Array<[string, () => ReturnType<typeof setup>, RegExp]> = [
    ['disk UUID error', () => setup({ disk: new StubDisk('uuid') }), /setting up disk: no uuid/],
    ['passphrase error', () => setup({ disk: new StubDisk('passphrase') }), /setting up disk: keyslot change failed/],
    [
      'existing node state file (read-only/used filesystem)',
      () => {
        const s = setup();
        const p = s.deps.files.resolve(NODE_STATE_PATH);
        mkdirSync(dirname(p), { recursive: true });
        writeFileSync(p, 'x');
        return s;
      },
      /persisting node state: .*EEXIST/,
    ],
    ['host key missing', () => setup({ ssh: { install: () => Promise.reject(new Error('failed to read host SSH key')) } }), /setting up emergency SSH: failed to read host SSH key/],
    ['InitCluster error', () => setup({ cluster: { initCluster: () => Promise.reject(new Error('kubeadm init failed')) } }), /initializing cluster: kubeadm init failed/],
    [
      'a disk already bound to another identity (docs/adr/0008)',
      () => setup({ diskBinding: { bind: () => Promise.reject(new DiskBindingError('DISK_BOUND_TO_OTHER_IDENTITY', 'disk 00000000-0000-0000-0000-000000000000 is already bound to node "worker-9" with another attestation key')) } }),
      /binding disk to attestation key: disk 0{8}-.* is already bound to node "worker-9"/,
    ],
    ['the disk binding failing', () => setup({ diskBinding: { bind: () => Promise.reject(new Error('apiserver down')) } }), /binding disk to attestation key: apiserver down/],
  ];
  for (const [name, make, message] of afterLock) {
    it(`fails with Internal after the lock on ${name}`, async () => {
      const s = make();
      const { messages, code } = await callInit(s.server, request());
      assert.equal(code, grpc.status.INTERNAL);
      assert.match(messages[0]?.initFailure?.error ?? '', message);
      assert.match(messages[0]?.initFailure?.error ?? '', /^rpc error: code = Internal desc = /);
      assert.ok(messages.slice(1).every((m) => m.log));
      assert.equal(s.lockedCount(), 1, 'the JoinClient was stopped');
      assert.equal(s.server.outcome.kind, 'failed-after-lock');
    });
  }

  it('stop() waits for a running init and meanwhile refuses new calls with FailedPrecondition', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const s = setup({ cluster: { initCluster: async () => (await gate, Buffer.from('k')) } });
    const port = await s.server.listen('127.0.0.1:0', grpc.ServerCredentials.createInsecure());
    const client = new init.APIClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const got: init.InitResponse[] = [];
    const done = new Promise<void>((resolve) => {
      const st = client.init(request());
      st.on('data', (m: init.InitResponse) => got.push(m));
      st.on('end', () => resolve());
      st.on('error', () => resolve());
    });
    while (s.lockedCount() === 0) await new Promise((r) => setTimeout(r, 5));
    let stopped = false;
    const stopping = s.server.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(stopped, false, 'stop waits for the running Init');
    // Meanwhile a second init is refused as final (FailedPrecondition), not as retryable.
    const second = await new Promise<grpc.ServiceError>((resolve) => {
      const st2 = client.init(request());
      st2.on('data', () => undefined);
      st2.on('error', resolve);
    });
    assert.equal(second.code, grpc.status.FAILED_PRECONDITION);
    assert.equal(second.details, 'node is already being activated');
    release();
    await done;
    await stopping;
    assert.ok(got[0]?.initSuccess);
    client.close();
  });
});

describe('helpers', () => {
  it('chunks logs in 1024-byte pieces (last shorter)', async () => {
    const chunks: number[] = [];
    for await (const c of chunkLogs({ read: async function* () { yield Buffer.alloc(1000); yield Buffer.alloc(1500); } })) chunks.push(c.length);
    assert.deepEqual(chunks, [1024, 1024, 452]);
  });

  it('checks bcrypt init secrets ($2a$ and $2b$)', async () => {
    assert.equal(await initSecretMatches(HASH, Buffer.from('password')), true);
    assert.equal(await initSecretMatches(HASH.replace(/^\$2b\$/, '$2a$'), Buffer.from('password')), true);
    assert.equal(await initSecretMatches(HASH, Buffer.from('passwordx')), false);
    assert.equal(await initSecretMatches('not a hash', Buffer.from('password')), false);
    assert.equal(await initSecretMatches(HASH, Buffer.alloc(0)), false);
  });
});
