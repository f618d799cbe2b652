import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { PassThrough } from 'node:stream';
import { createLogger, createNopLogger } from '@asterism/logger';
import type { InstanceMetadata, MetadataProvider } from '@asterism/metadata';
import { NodeLock } from '@asterism/nodelock';
import type { join as joinpb } from '@asterism/proto';
import type { StateDisk } from '../disk/state-disk.js';
import { NodeFileWriter } from '../state/file-writer.js';
import { NODE_STATE_PATH } from '../state/node-state.js';
import { Backoff } from './backoff.js';
import { NODE_PATHS } from '../state/node-paths.js';
import { JoinClient, JoinClientError, type JoinClientDeps } from './join-client.js';
import type { JoinClusterRequest } from './ports.js';

const inst = (Name: string, Role: InstanceMetadata['Role'], VPCIP: string): InstanceMetadata => ({ Name, Role, VPCIP, ProviderID: '', SecondaryIPRange: '', AliasIPRanges: null });

/** Metadata stub whose answers can fail a number of times first. */
class StubMetadata implements MetadataProvider {
  selfFailures = 0;
  listFailures = 0;
  selfAnswers: InstanceMetadata[] = [];
  constructor(
    public me: InstanceMetadata,
    public peers: InstanceMetadata[],
  ) {}
  async self() {
    if (this.selfFailures-- > 0) throw new Error('metadata down');
    return this.selfAnswers.shift() ?? this.me;
  }
  async list() {
    if (this.listFailures-- > 0) throw new Error('list failed');
    return this.peers;
  }
  async getLoadBalancerEndpoint() {
    return { host: '', port: '6443' };
  }
  async initSecretHash() {
    return '';
  }
  async uid() {
    return '';
  }
}

const ticket = (over: Partial<joinpb.IssueJoinTicketResponse> = {}): joinpb.IssueJoinTicketResponse => ({
  stateDiskKey: Buffer.alloc(32, 5),
  measurementSalt: Buffer.alloc(32, 2),
  measurementSecret: Buffer.alloc(32, 3),
  kubeletCert: Buffer.from('-----BEGIN CERTIFICATE-----\n'),
  apiServerEndpoint: '192.0.2.1:6443',
  token: 'abcdef.0123456789abcdef',
  discoveryTokenCaCertHash: 'sha256:ab',
  controlPlaneFiles: [{ name: 'etcd/ca.key', data: Buffer.from('key') }],
  kubernetesVersion: '',
  kubernetesComponents: [],
  authorizedCaPublicKey: Buffer.from('ssh-ed25519 CA\n'),
  hostCertificate: Buffer.from('ssh-ed25519-cert-v01@openssh.com X\n'),
  ...over,
});

function setup(role: InstanceMetadata['Role'] = 'Worker', opts: { ticketFailures?: number; joinFailures?: number; diskFails?: boolean; unreachableProbes?: number; backoff?: Backoff } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'joinclient-'));
  const metadata = new StubMetadata(inst('node-2', role, '192.0.2.8'), [inst('node-2', role, '192.0.2.8'), inst('node-3', 'ControlPlane', '192.0.2.1'), inst('node-4', 'ControlPlane', '192.0.2.2')]);
  const marks: Buffer[] = [];
  const lock = new NodeLock({ markNodeAsBootstrapped: async (id) => void marks.push(Buffer.from(id)) });
  let ticketFailures = opts.ticketFailures ?? 0;
  let joinFailures = opts.joinFailures ?? 0;
  const dialed: string[] = [];
  const probed: string[] = [];
  let reachableAfter = opts.unreachableProbes ?? 0;
  const joins: JoinClusterRequest[] = [];
  let passphrase: Buffer | undefined;
  let locked = 0;
  const disk: StateDisk = {
    uuid: async () => {
      if (opts.diskFails) throw new Error('no disk');
      return 'abcdef01-0000-4000-8000-000000000000';
    },
    updatePassphrase: async (p) => void (passphrase = Buffer.from(p)),
    markForReset: async () => undefined,
  };
  const deps: JoinClientDeps = {
    lock,
    metadata,
    disk,
    files: new NodeFileWriter(root),
    host: { addresses: async () => ['192.0.2.8'], hostname: async () => 'node-2' },
    hostKey: { publicKeyWire: async () => Buffer.from('wire') },
    csr: { create: async (name, ips) => ({ csrDer: Buffer.from(`csr:${name}:${ips.join(',')}`), privateKeyPem: '-----BEGIN EC PRIVATE KEY-----\n' }) },
    probe: { reachable: async (endpoint) => (probed.push(endpoint), reachableAfter-- <= 0) },
    dialer: {
      async issueJoinTicket(endpoint, req) {
        dialed.push(endpoint);
        assert.equal(req.diskUuid, 'abcdef01-0000-4000-8000-000000000000');
        assert.equal(req.certificateRequest.toString(), 'csr:node-2:192.0.2.8');
        assert.equal(req.isControlPlane, role === 'ControlPlane');
        if (ticketFailures-- > 0) throw new Error('unavailable');
        return ticket();
      },
      issueRejoinTicket: async () => Promise.reject(new Error('unused')),
    },
    cluster: {
      async joinCluster(req) {
        joins.push(req);
        if (joinFailures-- > 0) throw new Error('kubeadm join failed');
      },
    },
    onLocked: () => void locked++,
    logger: createNopLogger(),
  };
  const client = new JoinClient(deps, { backoff: opts.backoff ?? new Backoff(1, 5, 0), joinAttempts: 3, reachable: { intervalMs: 2, relistMs: 0 } });
  return { client, deps, metadata, marks, dialed, probed, joins, root, files: deps.files, passphrase: () => passphrase, locked: () => locked };
}

describe('JoinClient (TestClient)', () => {
  it('worker: retries metadata errors, then joins and writes every file with mode 0600', async () => {
    const s = setup();
    s.metadata.selfFailures = 3;
    assert.equal(await s.client.start(), 'joined');
    assert.equal(s.marks.length, 1);
    assert.equal(s.locked(), 1);
    assert.deepEqual(s.passphrase(), Buffer.alloc(32, 5));
    for (const p of [NODE_PATHS.kubeletCert, NODE_PATHS.kubeletKey, NODE_PATHS.sshCaPublicKey, NODE_PATHS.sshHostCertificate, NODE_STATE_PATH]) {
      const real = s.files.resolve(p);
      assert.ok(existsSync(real), p);
      assert.equal(statSync(real).mode & 0o777, 0o600, p);
    }
    assert.equal(readFileSync(s.files.resolve(NODE_PATHS.sshHostCertificate), 'utf8'), 'ssh-ed25519-cert-v01@openssh.com X\n');
    assert.ok(!existsSync(s.files.resolve(`${NODE_PATHS.kubernetesPki}/etcd/ca.key`)), 'workers get no control-plane files');
    assert.equal(s.joins[0]?.token, 'abcdef.0123456789abcdef');
    assert.deepEqual(s.joins[0]?.caCertHashes, ['sha256:ab']);
  });

  it("hands the node runtime the identity it read from the metadata (name, IP, provider ID): the runtime reads none itself", async () => {
    const s = setup();
    s.metadata.me = { ...s.metadata.me, ProviderID: 'qemu:///worker' };
    assert.equal(await s.client.start(), 'joined');
    const me = s.metadata.me;
    assert.deepEqual({ name: s.joins[0]?.nodeName, ip: s.joins[0]?.nodeIp, providerId: s.joins[0]?.providerId, role: s.joins[0]?.role }, { name: me.Name, ip: me.VPCIP, providerId: 'qemu:///worker', role: me.Role });
  });

  it('retries when self has no name or an unknown role', async () => {
    const s = setup();
    s.metadata.selfAnswers = [inst('', 'Worker', ''), inst('node-2', 'Unknown', '')];
    assert.equal(await s.client.start(), 'joined');
  });

  it('retries list errors and ticket errors, trying every control plane', async () => {
    const s = setup('Worker', { ticketFailures: 2 });
    s.metadata.listFailures = 3;
    assert.equal(await s.client.start(), 'joined');
    assert.deepEqual(s.dialed.slice(0, 2), ['192.0.2.1:30090', '192.0.2.2:30090']);
  });

  it('control plane: writes the control-plane PKI files', async () => {
    const s = setup('ControlPlane', { ticketFailures: 2 });
    assert.equal(await s.client.start(), 'joined');
    assert.equal(readFileSync(s.files.resolve(`${NODE_PATHS.kubernetesPki}/etcd/ca.key`), 'utf8'), 'key');
  });

  it('retries a failing Kubernetes join and fails after the attempts, keeping the lock', async () => {
    const once = setup('Worker', { joinFailures: 1 });
    assert.equal(await once.client.start(), 'joined');
    assert.equal(once.joins.length, 2);
    const always = setup('Worker', { joinFailures: 99 });
    await assert.rejects(always.client.start(), (e: unknown) => e instanceof JoinClientError && e.code === 'JOIN_FAILED');
    assert.equal(always.joins.length, 3);
    assert.ok(always.deps.lock.locked);
  });

  it('does nothing when the InitServer already locked the node', async () => {
    const s = setup();
    await s.deps.lock.tryLockOnce(Buffer.from([1]), 'init');
    assert.equal(await s.client.start(), 'lost-race');
    assert.ok(!existsSync(s.files.resolve(NODE_PATHS.sshHostCertificate)));
    assert.equal(s.locked(), 0);
  });

  it('fails without taking the lock when the disk cannot be read', async () => {
    const s = setup('Worker', { diskFails: true });
    await assert.rejects(s.client.start(), (e: unknown) => e instanceof JoinClientError && e.code === 'DISK_UNAVAILABLE');
    assert.equal(s.deps.lock.locked, false);
  });

  it('stops cleanly while waiting for a joinservice', async () => {
    const s = setup('Worker', { ticketFailures: 1_000_000 });
    const running = s.client.start();
    await new Promise((r) => setTimeout(r, 30));
    await s.client.stop();
    assert.equal(await running, 'stopped');
    assert.equal(s.deps.lock.locked, false);
  });

  it('asks for the ticket as soon as the readiness probe sees a joinservice, never sleeping the backoff while none listens', { timeout: 10_000 }, async () => {
    // A backoff of a minute: any blind sleep before the first ticket request would hang this test.
    const s = setup('Worker', { unreachableProbes: 10, backoff: new Backoff(60_000, 60_000, 60_000) });
    assert.equal(await s.client.start(), 'joined');
    assert.ok(s.probed.length > 10, `probed ${s.probed.length} times`);
    // Only endpoints that answered the probe were dialled, and the first one that did gave the ticket.
    assert.equal(s.dialed.length, 1);
  });

  it('stops cleanly while probing for a joinservice', async () => {
    const s = setup('Worker', { unreachableProbes: 1_000_000 });
    const running = s.client.start();
    await new Promise((r) => setTimeout(r, 30));
    await s.client.stop();
    assert.equal(await running, 'stopped');
    assert.equal(s.dialed.length, 0);
  });

  it('reports the moment a joinservice first answered the probe, once, before any ticket is asked for', async () => {
    const s = setup('Worker', { unreachableProbes: 3, ticketFailures: 2 });
    const reached: Array<{ at: Date; dialedBefore: number; probedBefore: number }> = [];
    s.deps.onReachable = (at) => reached.push({ at, dialedBefore: s.dialed.length, probedBefore: s.probed.length });
    const started = Date.now();
    assert.equal(await s.client.start(), 'joined');
    assert.equal(reached.length, 1, 'once, although the ticket took 3 rounds of probing');
    assert.equal(reached[0]!.dialedBefore, 0);
    assert.ok(reached[0]!.probedBefore > 3, 'after the unreachable probes');
    assert.ok(reached[0]!.at.getTime() >= started && reached[0]!.at.getTime() <= Date.now());
  });

  it('makes the kubelet CSR once, however many attempts the ticket takes', async () => {
    const s = setup('Worker', { ticketFailures: 3 });
    let made = 0;
    const create = s.deps.csr.create;
    s.deps.csr.create = (name, ips) => (made++, create(name, ips));
    assert.equal(await s.client.start(), 'joined');
    assert.equal(made, 1);
  });

  it('every line after the ticket carries the join id the ticket was requested with, and the backend gets it too', async () => {
    const s = setup('Worker', { ticketFailures: 1 });
    const stream = new PassThrough();
    const chunks: string[] = [];
    stream.on('data', (d: Buffer) => chunks.push(d.toString()));
    s.deps.logger = createLogger({ component: 'test', stream });
    const joinIds: string[] = [];
    const issue = s.deps.dialer.issueJoinTicket.bind(s.deps.dialer);
    s.deps.dialer.issueJoinTicket = (endpoint, req, options) => (joinIds.push(options.joinId), issue(endpoint, req, options));
    assert.equal(await s.client.start(), 'joined');
    await new Promise((r) => setImmediate(r));
    const lines = chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    const winner = joinIds.at(-1)!;
    assert.equal(joinIds.length, 2, 'one failed request, one ticket: each with its own id');
    assert.notEqual(joinIds[0], winner);
    const after = lines.slice(lines.findIndex((l) => l.msg === 'received join ticket'));
    assert.ok(after.some((l) => l.msg === 'join step finished') && after.some((l) => l.msg === 'joined the cluster'));
    assert.deepEqual(after.filter((l) => l.joinId !== winner).map((l) => l.msg), []);
    assert.equal(s.joins[0]?.joinId, winner);
  });

  it('refuses control-plane file names that escape the PKI folder', async () => {
    const s = setup('ControlPlane');
    s.deps.dialer.issueJoinTicket = async () => ticket({ controlPlaneFiles: [{ name: '../../etc/passwd', data: Buffer.from('x') }] });
    await assert.rejects(s.client.start(), (e: unknown) => e instanceof JoinClientError && e.code === 'TICKET_INVALID' && /refusing control-plane file name/.test(e.message));
    assert.equal(s.deps.lock.locked, false, 'refused before the lock');
    assert.equal(s.passphrase(), undefined, 'the disk was not re-keyed');
  });

  it('refuses a ticket with malformed Kubernetes components before the lock, writing nothing', async () => {
    const s = setup('Worker');
    const bad = { url: 'ftp://artifacts/kubelet', hash: 'sha256:00', installPath: '/run/state/bin/kubelet', extract: false };
    s.deps.dialer.issueJoinTicket = async () => ticket({ kubernetesComponents: [bad] });
    await assert.rejects(s.client.start(), (e: unknown) => e instanceof JoinClientError && e.code === 'TICKET_INVALID' && /Kubernetes components/.test(e.message));
    assert.equal(s.deps.lock.locked, false);
    assert.equal(s.joins.length, 0);
    assert.ok(!existsSync(s.files.resolve(NODE_PATHS.kubeletCert)));
  });
});

describe('Backoff', () => {
  it('grows exponentially with full jitter, capped, never below the floor', () => {
    const b = new Backoff(200, 10_000, 50, () => 0.999);
    const delays = Array.from({ length: 10 }, () => b.next());
    assert.ok(delays[0]! < 1000, 'first retry well under a second');
    assert.ok(delays.every((d) => d <= 10_000 && d >= 50));
    assert.ok(delays[9]! > delays[0]!);
    const low = new Backoff(200, 10_000, 50, () => 0);
    assert.equal(low.next(), 50);
  });
});
