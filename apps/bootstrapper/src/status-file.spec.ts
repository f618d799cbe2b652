import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import bcrypt from 'bcryptjs';
import * as grpc from '@grpc/grpc-js';
import { DummyIssuer, DummyValidator } from '@asterism/attestation';
import { atlsChannelCredentials, atlsServerCredentials } from '@asterism/atls';
import { encodeClusterKmsUri } from '@asterism/crypto';
import { createNopLogger } from '@asterism/logger';
import { NodeLock } from '@asterism/nodelock';
import { init } from '@asterism/proto';
import { PeerRateLimiter } from '@asterism/service-runtime';
import { InitFlow } from './initserver/init-flow.js';
import { InitServer } from './initserver/init-server.js';
import { NodeFileWriter } from './state/file-writer.js';
import { NodeStatusFile, type NodeStatus } from './status-file.js';

const servers: InitServer[] = [];
after(() => servers.forEach((s) => s.server.forceShutdown()));

/** An InitServer whose flow never gets past the init secret (every call here has a wrong one). */
function initServer(): InitServer {
  const flow = new InitFlow({
    initSecretHash: bcrypt.hashSync('password', 4),
    lock: new NodeLock({ markNodeAsBootstrapped: async () => assert.fail('a wrong secret must not lock the node') }),
    disk: { uuid: async () => '0', updatePassphrase: async () => undefined, markForReset: async () => undefined },
    files: new NodeFileWriter(mkdtempSync(join(tmpdir(), 'status-'))),
    ssh: { install: async () => undefined },
    identity: { read: async () => assert.fail('a wrong secret must not read the node identity') },
    host: { addresses: async () => ['192.0.2.10'], hostname: async () => 'node-0' },
    cluster: { initCluster: async () => Buffer.from('kubeconfig') },
    diskBinding: { bind: async () => assert.fail('a wrong secret must not bind the disk') },
    onLocked: () => undefined,
    logger: createNopLogger(),
  });
  // One wrong secret per address, then ResourceExhausted (the default is 5, then one per 2 s).
  const server = new InitServer(flow, { read: async function* () { yield Buffer.from('node log'); } }, createNopLogger(), {}, { secretAttempts: new PeerRateLimiter(0.001, 1) });
  servers.push(server);
  return server;
}

/** One Init call with a wrong secret on `client`; resolves with the final status code. */
function wrongSecret(client: init.APIClient): Promise<grpc.status> {
  const req = init.InitRequest.fromPartial({ kmsUri: encodeClusterKmsUri({ key: Buffer.alloc(32), salt: Buffer.alloc(32) }), storageUri: 'storage://no-store', initSecret: Buffer.from('wrong') });
  return new Promise((resolve) => {
    const stream = client.init(req, { deadline: Date.now() + 10_000 });
    stream.on('data', () => undefined);
    stream.on('error', (e: grpc.ServiceError) => resolve(e.code));
    stream.on('status', (s: grpc.StatusObject) => s.code === grpc.status.OK && resolve(s.code));
  });
}

const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as NodeStatus;

describe('NodeStatusFile', () => {
  it("reports the InitServer's refusals (aTLS handshakes by reason, wrong-secret attempts) while the node waits", async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'status-')), 'status.json');
    const status = new NodeStatusFile(path, { name: 'node-0', variant: 'qemu-vtpm' }, (err) => assert.fail(String(err)));
    const credentials = atlsServerCredentials({ issuer: new DummyIssuer(), admission: { handshakesPerSecondPerAddress: 0.001, handshakeBurstPerAddress: 1 } });
    const server = initServer();
    status.addRefusalSource('initServer', { atls: credentials, initSecretAttemptsRefused: () => server.refusedAttempts });
    await status.update({ phase: 'waiting' });
    assert.deepEqual(read(path).refusals, { initServer: { atlsAdmitted: 0, atlsRefused: {}, initSecretAttemptsRefused: 0 } });

    const port = await server.listen('127.0.0.1:0', credentials);
    const creds = () => atlsChannelCredentials({ validators: [new DummyValidator()] });
    const first = new init.APIClient(`127.0.0.1:${port}`, creds());
    const second = new init.APIClient(`127.0.0.1:${port}`, creds());
    try {
      // One connection, two calls: the second wrong secret is over the per-address budget.
      assert.deepEqual([await wrongSecret(first), await wrongSecret(first)], [grpc.status.PERMISSION_DENIED, grpc.status.RESOURCE_EXHAUSTED]);
      // A second connection from the same address is over the handshake rate: refused before any attestation.
      assert.equal(await wrongSecret(second), grpc.status.UNAVAILABLE);
    } finally {
      first.close();
      second.close();
    }
    await status.refresh();
    const written = read(path);
    assert.equal(written.phase, 'waiting');
    const r = written.refusals?.initServer;
    assert.equal(r?.atlsAdmitted, 1);
    assert.ok((r?.atlsRefused.ADDRESS_HANDSHAKE_RATE ?? 0) >= 1, JSON.stringify(r));
    assert.equal(r?.initSecretAttemptsRefused, 1);
  });

  it('a refresh rewrites the file only when a counter changed; a phase update keeps the counters', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'status-')), 'status.json');
    const status = new NodeStatusFile(path, { name: 'node-0', variant: 'qemu-vtpm' }, (err) => assert.fail(String(err)));
    const atls = { admitted: 3, refusals: { ADDRESS_CONNECTION_LIMIT: 2 } as Record<string, number> };
    status.addRefusalSource('recoveryServer', { atls });
    await status.update({ phase: 'waiting' });
    const firstWrite = read(path).updatedAt;
    await new Promise((r) => setTimeout(r, 5));
    await status.refresh();
    assert.equal(read(path).updatedAt, firstWrite, 'nothing changed: no write');
    atls.refusals = { ADDRESS_CONNECTION_LIMIT: 5 };
    await status.refresh();
    assert.deepEqual(read(path).refusals, { recoveryServer: { atlsAdmitted: 3, atlsRefused: { ADDRESS_CONNECTION_LIMIT: 5 } } });
    await status.update({ phase: 'rejoined', bootstrapMs: 42 });
    assert.deepEqual(read(path), { ...read(path), name: 'node-0', variant: 'qemu-vtpm', phase: 'rejoined', bootstrapMs: 42, refusals: { recoveryServer: { atlsAdmitted: 3, atlsRefused: { ADDRESS_CONNECTION_LIMIT: 5 } } } });
  });
});

describe('NodeStatusFile phases and milestones', () => {
  const file = (path: string, onError: (err: unknown) => void = (err) => assert.fail(String(err))) => new NodeStatusFile(path, { name: 'worker-0', variant: 'qemu-vtpm' }, onError);

  it('keeps a reported milestone (joinServiceReachableAt) in every later write; other fields are per update', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'status-')), 'run/asterism/status.json');
    const status = file(path);
    await status.update({ phase: 'starting' });
    assert.equal(read(path).joinServiceReachableAt, undefined);
    await status.update({ phase: 'waiting', joinServiceReachableAt: '2026-11-25T20:00:00.123Z' });
    await status.update({ phase: 'failed', error: 'x' });
    await status.update({ phase: 'joined', bootstrapMs: 42 });
    const s = read(path);
    assert.deepEqual([s.name, s.variant, s.phase, s.bootstrapMs, s.joinServiceReachableAt, s.error], ['worker-0', 'qemu-vtpm', 'joined', 42, '2026-11-25T20:00:00.123Z', undefined]);
  });

  it('writes in call order even when the calls are not awaited', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'status-')), 'status.json');
    const status = file(path);
    const phases: NodeStatus['phase'][] = ['starting', 'waiting', 'joined'];
    await Promise.all(phases.map((phase) => status.update({ phase })));
    assert.equal(read(path).phase, 'joined');
  });

  it('reports a failed write to onError instead of throwing', async () => {
    const errors: unknown[] = [];
    // The status folder's place is taken by a file: mkdir fails with ENOTDIR/EEXIST.
    const dir = mkdtempSync(join(tmpdir(), 'status-'));
    writeFileSync(join(dir, 'run'), '');
    await file(join(dir, 'run/asterism/status.json'), (err) => errors.push(err)).update({ phase: 'starting' });
    assert.equal(errors.length, 1);
  });
});
