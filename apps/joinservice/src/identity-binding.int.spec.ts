/**
 * `--identity-binding=strict` (the default, docs/adr/0008) end to end with REAL components: the
 * joinservice process, a real kube-apiserver (bindings are immutable ConfigMaps), a keyservice
 * process, two swtpm vTPMs (two attestation keys) attesting with qemu-vtpm, and a local HTTP server
 * replaying the qemu metadata API's `/peers` (names and roles by IP). Each "node" connects from its
 * own loopback address, as the local cluster's nodes do. A third swtpm is the init node, whose disk
 * the bootstrapper binds at init (it never joins).
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { attestationKeyDigest, QemuVtpmIssuer } from '@asterism/attestation';
import { atlsChannelCredentials } from '@asterism/atls';
import { BINDING_NAMESPACE, BINDING_PREFIX, ConfigMapIdentityBindings, ConfigMapStore, UPDATE_GROUP, UPDATE_VERSION } from '@asterism/k8s';
import { testenvUnavailable } from '@asterism/k8s-testenv';
import { buildGoPeer, haveGo, runGoClient } from '@asterism/interop';
import { createNopLogger } from '@asterism/logger';
import { join as joinApi } from '@asterism/proto';
import { missingComponent } from '@asterism/testing';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import { call, joinRequest, keyserviceCalls, startHarness, type Harness } from './joinservice-harness.int.spec.js';
import { resolvePeer } from './identity/peer-identity.js';
import { IdentityBindingStage } from './ticket/identity-binding.js';
import { JoinError } from './ticket/errors.js';

const skip = testenvUnavailable() || (swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT));

const DISK_A = 'aaaaaaaa-0000-4000-8000-00000000000a';
const DISK_B = 'bbbbbbbb-0000-4000-8000-00000000000b';
const DISK_RACE = 'cccccccc-0000-4000-8000-00000000000c';
const DISK_INIT = 'eeeeeeee-0000-4000-8000-00000000000e';
/** What the platform says about each source IP (the qemu metadata API's /peers). */
const PEERS = [
  { Name: 'worker-a', Role: 'Worker', VPCIP: '127.0.0.2' },
  { Name: 'worker-b', Role: 'Worker', VPCIP: '127.0.0.3' },
  { Name: 'control-plane-1', Role: 'ControlPlane', VPCIP: '127.0.0.4' },
  { Name: 'control-plane-0', Role: 'ControlPlane', VPCIP: '127.0.0.6' },
];
const ZERO_PCR4 = JSON.stringify({ measurements: { 4: { expected: '00'.repeat(32), warnOnly: false } } });

describe('joinservice --identity-binding=strict: identity bound to attestation', { skip }, () => {
  let tpmA: Swtpm;
  let tpmB: Swtpm;
  /** The init node's vTPM. */
  let tpmInit: Swtpm;
  let metadata: Server;
  let h: Harness;
  const clients: joinApi.APIClient[] = [];
  /** A join.API client attesting with `tpm`, connecting from `ip`. */
  const node = (tpm: Swtpm, ip: string) => {
    const c = new joinApi.APIClient(h.endpoint, atlsChannelCredentials({ issuer: new QemuVtpmIssuer(() => tpm.client()), localAddress: ip }));
    clients.push(c);
    return c;
  };
  const issue = (c: joinApi.APIClient, req: joinApi.IssueJoinTicketRequest) => call<joinApi.IssueJoinTicketResponse>((cb) => c.issueJoinTicket(req, cb));
  const rejoin = (c: joinApi.APIClient, diskUuid: string) => call<joinApi.IssueRejoinTicketResponse>((cb) => c.issueRejoinTicket({ diskUuid }, cb));
  const binding = (uuid: string) => h.cp.admin.core.readNamespacedConfigMap({ namespace: BINDING_NAMESPACE, name: `${BINDING_PREFIX}${uuid}` });

  before(async () => {
    [tpmA, tpmB, tpmInit] = await Promise.all([startSwtpm(), startSwtpm(), startSwtpm()]);
    metadata = createServer((req, res) => {
      if (req.url === '/peers') res.writeHead(200).end(JSON.stringify(PEERS));
      else res.writeHead(404).end('No matching peer found');
    });
    await new Promise<void>((r) => metadata.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(metadata.address() as AddressInfo).port}`;
    // No --identity-binding flag: strict is the default.
    h = await startHarness('qemu-vtpm', ZERO_PCR4, [`--metadata-url=${url}`]);
  });
  after(async () => {
    for (const c of clients) c.close();
    await h?.stop();
    metadata?.close();
    await tpmA?.stop();
    await tpmB?.stop();
    await tpmInit?.stop();
  });

  it('a first join binds the disk to the node\'s AK and metadata name (immutable ConfigMap)', async () => {
    const { err, res } = await issue(node(tpmA, '127.0.0.2'), joinRequest(h.dir, 'worker-a', { diskUuid: DISK_A }));
    assert.equal(err, null, err?.details);
    assert.equal(res!.stateDiskKey.length, 32);
    const cm = await binding(DISK_A);
    assert.equal(cm.immutable, true);
    assert.equal(cm.data?.nodeName, 'worker-a');
    assert.equal(cm.data?.role, 'Worker');
    assert.match(cm.data?.akDigest ?? '', /^sha256:[0-9a-f]{64}$/);
  });

  it('a second attested node (other swtpm, other AK) asking for that disk is refused PERMISSION_DENIED before any keyservice call', async () => {
    const before = await keyserviceCalls(h.keyserviceMetrics);
    const b = node(tpmB, '127.0.0.3');
    const j = await issue(b, joinRequest(h.dir, 'worker-b', { diskUuid: DISK_A }));
    assert.equal(j.err?.code, grpc.status.PERMISSION_DENIED, j.err?.details);
    assert.match(j.err!.details, /bound to another node's attestation key/);
    const r = await rejoin(b, DISK_A);
    assert.equal(r.err?.code, grpc.status.PERMISSION_DENIED, r.err?.details);
    assert.equal(await keyserviceCalls(h.keyserviceMetrics), before, 'no GetDataKey call was made');
  });

  it('a worker asking for system:node:control-plane-0 or is_control_plane=true is refused; no key, no CA file, no JoiningNode', async () => {
    const before = await keyserviceCalls(h.keyserviceMetrics);
    const b = node(tpmB, '127.0.0.3');
    const cases: Array<[string, joinApi.IssueJoinTicketRequest, RegExp]> = [
      ["another node's name", joinRequest(h.dir, 'control-plane-0', { diskUuid: DISK_B }), /metadata source names this peer "worker-b"/],
      ['control-plane files', joinRequest(h.dir, 'worker-b', { diskUuid: DISK_B, controlPlane: true }), /metadata role is Worker/],
    ];
    for (const [what, req, why] of cases) {
      const { err } = await issue(b, req);
      assert.equal(err?.code, grpc.status.PERMISSION_DENIED, `${what}: ${err?.details}`);
      assert.match(err!.details, why, what);
    }
    assert.equal(await keyserviceCalls(h.keyserviceMetrics), before, 'no GetDataKey call was made');
    assert.ok(!h.joinservice.jsonLogs().some((l) => l.msg === 'join ticket issued' && l.nodeName === 'control-plane-0'));
    await assert.rejects(h.cp.admin.custom.getClusterCustomObject({ group: UPDATE_GROUP, version: UPDATE_VERSION, plural: 'joiningnodes', name: 'control-plane-0' }));
    await assert.rejects(binding(DISK_B), 'a refused join binds nothing');
  });

  it('a control plane the metadata source names gets the control-plane files', async () => {
    const { err, res } = await issue(node(tpmB, '127.0.0.4'), joinRequest(h.dir, 'control-plane-1', { diskUuid: DISK_B, controlPlane: true }));
    assert.equal(err, null, err?.details);
    assert.ok(res!.controlPlaneFiles.some((f) => f.name === 'ca.key'));
    assert.equal((await binding(DISK_B)).data?.role, 'ControlPlane');
  });

  it('a rejoin with the same AK is issued the same disk key, from another address too', async () => {
    const first = await issue(node(tpmA, '127.0.0.2'), joinRequest(h.dir, 'worker-a', { diskUuid: DISK_A }));
    assert.equal(first.err, null, first.err?.details);
    for (const ip of ['127.0.0.2', '127.0.0.5']) {
      const r = await rejoin(node(tpmA, ip), DISK_A);
      assert.equal(r.err, null, `${ip}: ${r.err?.details}`);
      assert.deepEqual(r.res!.stateDiskKey, first.res!.stateDiskKey);
    }
    const unknown = await rejoin(node(tpmA, '127.0.0.2'), DISK_RACE);
    assert.equal(unknown.err?.code, grpc.status.PERMISSION_DENIED, 'a disk that never joined has nothing to rejoin');
  });

  it("the init node's disk, bound at init: another attested worker asking for it under its own name is PERMISSION_DENIED before any keyservice call; the init node rejoins", async () => {
    // What the bootstrapper's init stage writes (InitDiskBinder), with the same library code: the AK
    // digest of a document its own issuer produced, its metadata name, role ControlPlane.
    const own = await tpmDocument(tpmInit);
    const store = new ConfigMapIdentityBindings(new ConfigMapStore(h.cp.admin.core));
    const initBinding = { diskUuid: DISK_INIT, akDigest: attestationKeyDigest(own.variant, own.document), nodeName: 'control-plane-0', role: 'ControlPlane' as const, createdAt: new Date().toISOString() };
    assert.equal(await store.create(initBinding), 'created');
    const bound = await binding(DISK_INIT);

    const before = await keyserviceCalls(h.keyserviceMetrics);
    const worker = node(tpmB, '127.0.0.3');
    const j = await issue(worker, joinRequest(h.dir, 'worker-b', { diskUuid: DISK_INIT }));
    assert.equal(j.err?.code, grpc.status.PERMISSION_DENIED, j.err?.details);
    assert.match(j.err!.details, /bound to another node's attestation key/);
    assert.equal(j.res, undefined, 'no disk key');
    const r = await rejoin(worker, DISK_INIT);
    assert.equal(r.err?.code, grpc.status.PERMISSION_DENIED, r.err?.details);
    assert.equal(await keyserviceCalls(h.keyserviceMetrics), before, 'no GetDataKey call was made');
    const after = await binding(DISK_INIT);
    assert.deepEqual([after.data, after.metadata?.resourceVersion], [bound.data, bound.metadata?.resourceVersion], 'the binding is unchanged');

    // The init node itself (same swtpm, so the same AK) rejoins under strict, from its own address.
    const mine = await rejoin(node(tpmInit, '127.0.0.6'), DISK_INIT);
    assert.equal(mine.err, null, mine.err?.details);
    assert.equal(mine.res!.stateDiskKey.length, 32);
  });

  it('concurrent first joins of one disk from two nodes: exactly one wins, the other is refused before its keys', async () => {
    const before = await keyserviceCalls(h.keyserviceMetrics);
    const [a, b] = await Promise.all([
      issue(node(tpmA, '127.0.0.2'), joinRequest(h.dir, 'worker-a', { diskUuid: DISK_RACE })),
      issue(node(tpmB, '127.0.0.3'), joinRequest(h.dir, 'worker-b', { diskUuid: DISK_RACE })),
    ]);
    const ok = [a, b].filter((r) => r.err === null);
    const refused = [a, b].filter((r) => r.err !== null);
    assert.equal(ok.length, 1, `${a.err?.details} / ${b.err?.details}`);
    // ABORTED when both passed the lookup and the apiserver refused the second create, else PERMISSION_DENIED.
    assert.ok([grpc.status.ABORTED, grpc.status.PERMISSION_DENIED].includes(refused[0]!.err!.code), refused[0]!.err!.details);
    assert.equal(await keyserviceCalls(h.keyserviceMetrics), before + 3, 'only the winner fetched keys');
    assert.equal((await binding(DISK_RACE)).data?.nodeName, a.err === null ? 'worker-a' : 'worker-b');
  });

  it('two first joins that both saw no binding: the real apiserver lets one create win, the other is ABORTED', async () => {
    // Both lookups are held until both returned, which forces the interleaving of a race.
    const real = new ConfigMapIdentityBindings(new ConfigMapStore(h.cp.admin.core));
    let release!: () => void;
    const bothLooked = new Promise<void>((r) => (release = r));
    let looked = 0;
    const store = {
      async get(uuid: string) {
        const b = await real.get(uuid);
        if (++looked === 2) release();
        await bothLooked;
        return b;
      },
      create: real.create.bind(real),
    };
    const attested = await tpmDocument(tpmA);
    const stage = new IdentityBindingStage({
      directory: { lookup: async (ip) => ({ '10.0.0.1': { name: 'n1', role: 'Worker' as const }, '10.0.0.2': { name: 'n2', role: 'Worker' as const } })[ip] },
      store,
      logger: createNopLogger(),
    });
    const uuid = 'dddddddd-0000-4000-8000-00000000000d';
    const req = (nodeName: string) => ({ diskUuid: uuid, nodeName, isControlPlane: false });
    const peer = (address: string) => resolvePeer(address, () => attested);
    const results = await Promise.allSettled([stage.checkJoin(req('n1'), peer('10.0.0.1:1')), stage.checkJoin(req('n2'), peer('10.0.0.2:1'))]);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    assert.ok(lost.reason instanceof JoinError && lost.reason.code === 'IDENTITY_BINDING_RACE', String(lost.reason));
  });
});

const goSkip = testenvUnavailable() || ((await haveGo()) ? false : missingComponent('go', 'a Go toolchain on PATH'));

describe('joinservice --identity-binding=strict: a reference-protocol client still joins', { skip: goSkip }, () => {
  let metadata: Server;
  let h: Harness;
  before(async () => {
    metadata = createServer((req, res) => {
      if (req.url === '/peers') res.writeHead(200).end(JSON.stringify([{ Name: 'go-node', Role: 'Worker', VPCIP: '127.0.0.1' }]));
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => metadata.listen(0, '127.0.0.1', () => r()));
    h = await startHarness('dummy', '{"measurements":{}}', [`--metadata-url=http://127.0.0.1:${(metadata.address() as AddressInfo).port}`]);
  });
  after(async () => {
    await h?.stop();
    metadata?.close();
  });

  it('Go crypto/tls + grpc-go (CA-list nonce) joins under its metadata name and is refused under another', async () => {
    const bin = await buildGoPeer();
    const run = async (name: string) => {
      const req = joinRequest(h.dir, name, { diskUuid: DISK_A });
      writeFileSync(join(h.dir, `${name}.csr.der`), req.certificateRequest);
      writeFileSync(join(h.dir, `${name}.hostkey`), req.hostPublicKey);
      return runGoClient(bin, h.endpoint, ['-attest', '-method', 'join', '-csr', join(h.dir, `${name}.csr.der`), '-hostkey', join(h.dir, `${name}.hostkey`)]);
    };
    const ok = await run('go-node');
    assert.equal(ok.ok, true, `${ok.code}: ${ok.message}`);
    assert.match(new X509Certificate(ok.kubeletCert!).subject, /CN=system:node:go-node/);
    const refused = await run('control-plane-0');
    assert.equal(refused.ok, false);
    assert.equal(refused.code, 'PermissionDenied', refused.message);
  });
});

/** A real qemu-vtpm document of `tpm` (its AK), as the aTLS layer hands it over. */
async function tpmDocument(tpm: Swtpm) {
  const issuer = new QemuVtpmIssuer(() => tpm.client());
  return { variant: issuer.variant, document: Buffer.from(await issuer.issue(Buffer.alloc(32), Buffer.alloc(32, 1))) };
}
