/**
 * The joinservice process end to end against REAL components: kube-apiserver + etcd +
 * controller-manager (tools/k8s-testenv), a keyservice process, aTLS with client attestation
 * (dummy variant here; qemu-vtpm on swtpm in attestation-reload.int.spec.ts), openssl-made CSRs
 * and ssh-keygen host keys.
 */
import assert from 'node:assert/strict';
import { createHash, X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import * as k8s from '@kubernetes/client-node';
import { DummyIssuer } from '@asterism/attestation';
import { atlsChannelCredentials } from '@asterism/atls';
import { deriveClusterId, parseAuthorizedKeyLine, parseSshCertificate } from '@asterism/crypto';
import { BINDING_PREFIX, UPDATE_GROUP, UPDATE_VERSION } from '@asterism/k8s';
import { setJoinId } from '@asterism/logger';
import { testenvUnavailable } from '@asterism/k8s-testenv';
import { buildGoPeer, haveGo, runGoClient } from '@asterism/interop';
import { join as joinApi } from '@asterism/proto';
import { findSecretLeaks, missingComponent, type NamedSecret } from '@asterism/testing';
import { call, DISK_UUID, joinRequest, keyserviceCalls, MASTER, MEASUREMENT_SALT, SALT, startHarness, type Harness } from './joinservice-harness.int.spec.js';

const skip = testenvUnavailable();
const goSkip = skip || ((await haveGo()) ? false : missingComponent('go', 'a Go toolchain on PATH'));

// `--identity-binding=off`: the reference's behaviour, which these tests pin down (every client
// here connects from 127.0.0.1 under any node name, two names share one disk). The strict default
// is tested in identity-binding.int.spec.ts.
describe('joinservice process against a real control plane and keyservice (--identity-binding=off)', { skip }, () => {
  let h: Harness;
  let client: joinApi.APIClient;
  before(async () => {
    h = await startHarness('dummy', '{"measurements":{}}', ['--identity-binding=off']);
    client = new joinApi.APIClient(h.endpoint, atlsChannelCredentials({ issuer: new DummyIssuer() }));
  });
  after(async () => {
    client?.close();
    await h?.stop();
  });

  it('issues a worker ticket whose credentials work against the real API server', async () => {
    const { err, res } = await call<joinApi.IssueJoinTicketResponse>((cb) => client.issueJoinTicket(joinRequest(h.dir, 'worker-1'), cb));
    assert.equal(err, null, err?.details);
    const t = res!;
    // Keys: the keyservice's HKDF over the master secret (docs/protocol/key-hierarchy.md).
    assert.equal(t.stateDiskKey.length, 32);
    assert.deepEqual(t.measurementSalt, MEASUREMENT_SALT);
    assert.equal(deriveClusterId(t.measurementSecret, t.measurementSalt).length, 32);
    // The bootstrap token authenticates as a bootstrap token.
    const review = await h.cp.kubeconfigFor({ token: t.token }).makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
    assert.equal(review.status?.userInfo?.username, `system:bootstrap:${t.token.split('.')[0]}`);
    // The discovery hash pins the cluster CA.
    const ca = new X509Certificate(h.cp.pki.ca.certPem);
    assert.equal(t.discoveryTokenCaCertHash, `sha256:${createHash('sha256').update(ca.publicKey.export({ type: 'spki', format: 'der' })).digest('hex')}`);
    assert.equal(t.apiServerEndpoint, `${h.cp.host}:${h.cp.port}`);
    // The kubelet certificate: signed by the CA, node identity, usages, one year.
    const kubelet = new X509Certificate(t.kubeletCert);
    assert.ok(kubelet.verify(ca.publicKey));
    assert.match(kubelet.subject, /O=system:nodes/);
    assert.match(kubelet.subject, /CN=system:node:worker-1/);
    assert.equal(kubelet.subjectAltName, 'IP Address:10.9.0.7');
    assert.ok(Math.abs(new Date(kubelet.validTo).getTime() - Date.now() - 365 * 24 * 3600_000) < 60_000);
    // SSH: the host certificate verifies and carries the requested principals plus the certSANs.
    const sshCert = parseSshCertificate(parseAuthorizedKeyLine(t.hostCertificate.toString()));
    assert.ok(sshCert.signatureValid);
    assert.deepEqual(sshCert.principals, ['10.9.0.7', 'worker-1', '203.0.113.9', 'cluster.example']);
    assert.equal(t.controlPlaneFiles.length, 0);
    assert.equal(t.kubernetesComponents[0]?.installPath, '/run/state/bin/kubelet');
    // The JoiningNode custom resource.
    const jn = (await h.cp.admin.custom.getClusterCustomObject({ group: UPDATE_GROUP, version: UPDATE_VERSION, plural: 'joiningnodes', name: 'worker-1' })) as { spec: Record<string, unknown> };
    assert.equal(jn.spec.name, 'worker-1');
    assert.equal(jn.spec.iscontrolplane, false);
    assert.match(String(jn.spec.componentsreference), /^k8s-components-sha256-/);
  });

  it('rejoin tickets derive the same disk key', async () => {
    const first = await call<joinApi.IssueJoinTicketResponse>((cb) => client.issueJoinTicket(joinRequest(h.dir, 'worker-2'), cb));
    const rejoin = await call<joinApi.IssueRejoinTicketResponse>((cb) => client.issueRejoinTicket({ diskUuid: DISK_UUID }, cb));
    assert.equal(rejoin.err, null);
    assert.deepEqual(rejoin.res!.stateDiskKey, first.res!.stateDiskKey);
    assert.deepEqual(rejoin.res!.measurementSecret, first.res!.measurementSecret);
  });

  it('control-plane tickets carry the PKI files; a second concurrent control-plane join is refused', async () => {
    const a = await call<joinApi.IssueJoinTicketResponse>((cb) => client.issueJoinTicket(joinRequest(h.dir, 'control-plane-1', { controlPlane: true }), cb));
    assert.equal(a.err, null, a.err?.details);
    assert.deepEqual(a.res!.controlPlaneFiles.map((f) => f.name).sort(), ['ca.crt', 'ca.key', 'etcd/ca.crt', 'etcd/ca.key', 'front-proxy-ca.crt', 'front-proxy-ca.key', 'sa.key', 'sa.pub']);
    const b = await call<joinApi.IssueJoinTicketResponse>((cb) => client.issueJoinTicket(joinRequest(h.dir, 'control-plane-2', { controlPlane: true }), cb));
    assert.equal(b.err?.code, grpc.status.ABORTED);
    assert.match(b.err!.details, /another node is already joining/);
  });

  it('malformed requests and unattested peers never reach the keyservice', async () => {
    const before = await keyserviceCalls(h.keyserviceMetrics);
    const bad: Array<[string, joinApi.IssueJoinTicketRequest]> = [
      ['empty disk uuid', { ...joinRequest(h.dir, 'bad-1'), diskUuid: '' }],
      ['wrong CSR organization', joinRequest(h.dir, 'bad-2', { subject: '/O=system:masters/CN=system:node:bad-2' })],
      ['garbage host key', { ...joinRequest(h.dir, 'bad-3'), hostPublicKey: Buffer.from('nope') }],
      // Used to derive keys, sign SSH and kubelet certificates, create a token, then fail UNAVAILABLE.
      ['node name with a path', joinRequest(h.dir, 'bad-5', { subject: '/O=system:nodes/CN=system:node:..\\/..\\/etc' })],
    ];
    for (const [what, req] of bad) {
      const { err } = await call((cb) => client.issueJoinTicket(req, cb));
      assert.equal(err?.code, grpc.status.INVALID_ARGUMENT, what);
    }
    // No client attestation at all: the aTLS gate refuses before any handler runs.
    const unattested = new joinApi.APIClient(h.endpoint, atlsChannelCredentials({}));
    try {
      const { err } = await call((cb) => unattested.issueJoinTicket(joinRequest(h.dir, 'bad-4'), cb));
      assert.ok(err && [grpc.status.UNAUTHENTICATED, grpc.status.UNAVAILABLE, grpc.status.PERMISSION_DENIED].includes(err.code), `got ${err?.code} ${err?.details}`);
    } finally {
      unattested.close();
    }
    assert.equal(await keyserviceCalls(h.keyserviceMetrics), before, 'no GetDataKey call was made');
  });

  it('a reference-protocol client (Go crypto/tls + grpc-go, CA-list nonce, dummy variant) gets a ticket', { skip: goSkip }, async () => {
    const bin = await buildGoPeer();
    const req = joinRequest(h.dir, 'go-node');
    writeFileSync(join(h.dir, 'go-node.csr.der'), req.certificateRequest);
    writeFileSync(join(h.dir, 'go-node.hostkey'), req.hostPublicKey);
    const before = await keyserviceCalls(h.keyserviceMetrics);
    const r = await runGoClient(bin, h.endpoint, ['-attest', '-method', 'join', '-csr', join(h.dir, 'go-node.csr.der'), '-hostkey', join(h.dir, 'go-node.hostkey')]);
    assert.equal(r.ok, true, `${r.code}: ${r.message}`);
    assert.equal(r.certRequested, true, 'the server asked for the client certificate (CA-list nonce)');
    assert.match(r.token ?? '', /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    assert.match(new X509Certificate(r.kubeletCert!).subject, /CN=system:node:go-node/);
    assert.equal(r.dataKey?.length, 64);
    assert.equal(await keyserviceCalls(h.keyserviceMetrics), before + 3);
    // Without attestation the Go client is refused before any key is fetched.
    const refused = await runGoClient(bin, h.endpoint, ['-method', 'join', '-csr', join(h.dir, 'go-node.csr.der'), '-hostkey', join(h.dir, 'go-node.hostkey')]);
    assert.equal(refused.ok, false);
    assert.equal(refused.code, 'Unauthenticated');
    assert.equal(await keyserviceCalls(h.keyserviceMetrics), before + 3);
  });

  it('off: two names got tickets for one disk and nothing was bound (the reference behaviour)', async () => {
    const cms = await h.cp.admin.core.listNamespacedConfigMap({ namespace: 'kube-system' });
    assert.deepEqual(cms.items.map((c) => c.metadata?.name).filter((n) => n?.startsWith(BINDING_PREFIX)), []);
  });

  it('logs every line of one join with its join id, in the joinservice and the keyservice, and never logs key material', async () => {
    const md = setJoinId(new grpc.Metadata(), 'join-abc-123');
    const { err, res } = await call<joinApi.IssueJoinTicketResponse>((cb) => client.issueJoinTicket(joinRequest(h.dir, 'worker-3'), md, cb));
    assert.equal(err, null);
    // The call lines are written once the status is sent, possibly after the client has its answer.
    await h.joinservice.waitForLog((l) => l.msg === 'rpc finished' && l.method === '/join.API/IssueJoinTicket' && l.joinId === 'join-abc-123', 5000);
    const lines = h.joinservice.jsonLogs().filter((l) => l.joinId === 'join-abc-123');
    assert.ok(lines.some((l) => l.msg === 'issuing join ticket') && lines.some((l) => l.msg === 'join ticket issued'));
    // The joinservice forwards the id: the keyservice (at debug here) tags its lines of the three key derivations.
    const keyCallLines = () => h.keyservice.jsonLogs().filter((l) => l.msg === 'rpc finished' && l.joinId === 'join-abc-123').length;
    for (const until = Date.now() + 5000; keyCallLines() < 3 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
    const keyLines = h.keyservice.jsonLogs().filter((l) => l.joinId === 'join-abc-123');
    assert.equal(keyLines.filter((l) => l.msg === 'derived data key').length, 3, JSON.stringify(keyLines));
    assert.equal(keyLines.filter((l) => l.msg === 'rpc finished' && l.method === '/kms.API/GetDataKey').length, 3);
    const all = [...h.joinservice.stderrLines, ...h.keyservice.stderrLines].join('\n');
    const secrets: NamedSecret[] = [
      { name: 'master secret', value: MASTER },
      { name: 'master salt', value: SALT },
      { name: 'state disk key', value: res!.stateDiskKey },
      { name: 'measurement secret', value: res!.measurementSecret },
      { name: 'bootstrap token secret', value: res!.token.split('.')[1]! },
    ];
    assert.deepEqual(findSecretLeaks(all, secrets), []);
  });
});
