import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { K8sError } from '@asterism/k8s';
import { createNopLogger } from '@asterism/logger';
import type { join } from '@asterism/proto';
import * as grpc from '@grpc/grpc-js';
import { RpcError } from '@asterism/service-runtime';
import { JoinError } from './errors.js';
import type { TicketIssuerDeps } from './ticket-issuer.js';
import { TicketIssuer } from './ticket-issuer.js';
import { resolvePeer } from '../identity/peer-identity.js';
import { parseJoinRequest, parseRejoinRequest } from './request-validation.js';
import { STUB_PARSERS, UUID, wireRequest } from './stub-request.fixture.js';


/** Stubs keyed like the reference's TestIssueJoinTicket, recording every call. */
function stubs(overrides: Partial<TicketIssuerDeps> = {}) {
  const calls: string[] = [];
  const keys: Record<string, Buffer> = { [UUID]: Buffer.from('010203', 'hex'), measurementSecret: Buffer.from('070809', 'hex'), ca_emergency_ssh: Buffer.alloc(32) };
  const deps: TicketIssuerDeps = {
    keys: {
      async getDataKey(id) {
        calls.push(`key:${id}`);
        const k = keys[id];
        if (!k) throw new Error(`no key ${id}`);
        return k;
      },
    },
    tokens: {
      async createJoinToken(ttl) {
        calls.push(`token:${ttl}`);
        return { apiServerEndpoint: '192.0.2.1:6443', token: 'abcdef.0123456789abcdef', discoveryTokenCaCertHash: 'sha256:hash' };
      },
    },
    components: {
      async componentsReference() {
        calls.push('componentsRef');
        return 'k8s-components-ref';
      },
      async components(name) {
        calls.push(`components:${name}`);
        return [{ url: 'data:x', hash: '', installPath: '/opt/x', extract: false }];
      },
    },
    kubeletCa: {
      async sign(csr) {
        calls.push(`kubeletCert:${csr.nodeName}`);
        return Buffer.from('040506', 'hex');
      },
    },
    controlPlaneFiles: {
      async read() {
        calls.push('cpFiles');
        return [{ name: 'test', data: Buffer.from('file') }];
      },
    },
    joiningNodes: {
      async add(spec) {
        calls.push(`joining:${spec.nodeName}:${spec.componentsReference}:${spec.isControlPlane}`);
      },
    },
    certSans: {
      async certSans() {
        return ['*'];
      },
    },
    sshCa: {
      async sign(seed, key, principals) {
        calls.push(`ssh:${seed.length}:${key.wire.toString()}:${principals.join(',')}`);
        if (seed.length < 32) throw new Error('seed too short');
        return { caPublicKey: Buffer.from('ssh-ed25519 CA\n'), certificate: Buffer.from('ssh-ed25519-cert-v01@openssh.com CERT\n') };
      },
    },
    measurementSalt: Buffer.alloc(32, 2),
    logger: createNopLogger(),
    ...overrides,
  };
  return { deps, calls, keys };
}

/** The same request parsed, as the boundary hands it to the issuer. */
const request = (over: Partial<join.IssueJoinTicketRequest> = {}) => parseJoinRequest(wireRequest(over), STUB_PARSERS);
const ctx = { peer: resolvePeer('192.0.2.9:50000'), joinId: 'join-1' };

describe('TicketIssuer.issueJoinTicket', () => {
  it('issues a worker ticket with every field (worker ok)', async () => {
    const { deps, calls } = stubs();
    const res = await new TicketIssuer(deps).issueJoinTicket(request(), ctx);
    assert.deepEqual(res.stateDiskKey, Buffer.from('010203', 'hex'));
    assert.deepEqual(res.measurementSecret, Buffer.from('070809', 'hex'));
    assert.deepEqual(res.measurementSalt, Buffer.alloc(32, 2));
    assert.deepEqual(res.kubeletCert, Buffer.from('040506', 'hex'));
    assert.equal(res.apiServerEndpoint, '192.0.2.1:6443');
    assert.equal(res.token, 'abcdef.0123456789abcdef');
    assert.equal(res.discoveryTokenCaCertHash, 'sha256:hash');
    assert.equal(res.controlPlaneFiles.length, 0);
    assert.equal(res.kubernetesVersion, '');
    assert.equal(res.kubernetesComponents.length, 1);
    assert.equal(res.authorizedCaPublicKey.toString(), 'ssh-ed25519 CA\n');
    assert.equal(res.hostCertificate.toString(), 'ssh-ed25519-cert-v01@openssh.com CERT\n');
    // Independent steps run concurrently (any order); the JoiningNode record comes last.
    assert.deepEqual([...calls].sort(), [
      'components:k8s-components-ref',
      'componentsRef',
      'joining:node:k8s-components-ref:false',
      'key:0a1b2c3d-0000-4000-8000-00000000000a',
      'key:ca_emergency_ssh',
      'key:measurementSecret',
      'kubeletCert:node',
      'ssh:32:ssh-key:10.0.0.5,node,*',
      'token:900000',
    ]);
    assert.equal(calls.at(-1), 'joining:node:k8s-components-ref:false');
    assert.ok(calls.indexOf('components:k8s-components-ref') > calls.indexOf('componentsRef'));
  });

  it('adds control-plane files for control planes', async () => {
    const { deps, calls } = stubs();
    const res = await new TicketIssuer(deps).issueJoinTicket(request({ isControlPlane: true }), ctx);
    assert.deepEqual(res.controlPlaneFiles, [{ name: 'test', data: Buffer.from('file') }]);
    assert.ok(calls.includes('joining:node:k8s-components-ref:true'));
  });

  it('falls back to the peer address as principal when nothing else is known', async () => {
    const { deps, calls } = stubs({ certSans: { certSans: async () => Promise.reject(new Error('file missing')) } });
    await new TicketIssuer(deps).issueJoinTicket(request({ hostCertificatePrincipals: [] }), ctx);
    assert.ok(calls.includes('ssh:32:ssh-key:192.0.2.9:50000'));
  });

  const failures: Array<[string, (s: ReturnType<typeof stubs>) => void, string, RegExp]> = [
    ['key getter error', (s) => delete s.keys[UUID], 'KEYSERVICE_UNAVAILABLE', /getting key for stateful disk/],
    ['measurement secret error', (s) => delete s.keys.measurementSecret, 'KEYSERVICE_UNAVAILABLE', /getting measurement secret/],
    ['SSH seed only 3 bytes', (s) => (s.keys.ca_emergency_ssh = Buffer.alloc(3)), 'INTERNAL', /generating and signing SSH host key/],
    ['token error', (s) => (s.deps.tokens = { createJoinToken: () => Promise.reject(new Error('apiserver down')) }), 'KUBERNETES_UNAVAILABLE', /generating Kubernetes join arguments/],
    ['components error', (s) => (s.deps.components.components = () => Promise.reject(new Error('x'))), 'KUBERNETES_UNAVAILABLE', /getting components/],
    ['certificate error', (s) => (s.deps.kubeletCa = { sign: () => Promise.reject(new Error('x')) }), 'INTERNAL', /generating kubelet certificate/],
    ['joining node error', (s) => (s.deps.joiningNodes = { add: () => Promise.reject(new Error('x')) }), 'KUBERNETES_UNAVAILABLE', /adding node to joining nodes/],
    ['apiserver refusing the object (422)', (s) => (s.deps.joiningNodes = { add: () => Promise.reject(new K8sError('K8S_INVALID', 'invalid name')) }), 'INVALID_REQUEST', /adding node to joining nodes: invalid name/],
    ['apiserver refusing our credentials (403)', (s) => (s.deps.tokens = { createJoinToken: () => Promise.reject(new K8sError('K8S_FORBIDDEN', 'forbidden')) }), 'INTERNAL', /forbidden/],
    ['keyservice refusing the key request (not retryable)', (s) => (s.deps.keys = { getDataKey: () => Promise.reject(new RpcError(grpc.status.INVALID_ARGUMENT, 'INVALID_REQUEST', 'bad id', { message: 'InvalidArgument' })) }), 'INTERNAL', /getting measurement secret: InvalidArgument/],
    ['keyservice unreachable (retryable)', (s) => (s.deps.keys = { getDataKey: () => Promise.reject(new RpcError(grpc.status.UNAVAILABLE, undefined, 'down', { message: 'Unavailable' })) }), 'KEYSERVICE_UNAVAILABLE', /getting measurement secret: Unavailable/],
  ];
  for (const [name, mutate, code, message] of failures) {
    it(`maps ${name} to ${code}`, async () => {
      const s = stubs();
      mutate(s);
      await assert.rejects(new TicketIssuer(s.deps).issueJoinTicket(request(), ctx), (e: unknown) => e instanceof JoinError && e.code === code && message.test(e.message));
      assert.ok(!s.calls.some((c) => c.startsWith('joining:')), 'no JoiningNode record for a failed ticket');
    });
  }

  it('runs the keyservice and Kubernetes steps concurrently, not one after another', async () => {
    // The measurement secret is only answered once the token, the components reference and the
    // kubelet certificate were requested: sequential steps would wait for it forever (deadline).
    const s = stubs({ outboundTimeoutMs: 2000 });
    const inner = s.deps.keys;
    const others = ['token:900000', 'componentsRef', 'kubeletCert:node'];
    s.deps.keys = {
      async getDataKey(id, length, signal) {
        if (id === 'measurementSecret') while (!others.every((c) => s.calls.includes(c))) await new Promise((r) => setTimeout(r, 1));
        return inner.getDataKey(id, length, signal);
      },
    };
    const res = await new TicketIssuer(s.deps).issueJoinTicket(request(), ctx);
    assert.deepEqual(res.measurementSecret, Buffer.from('070809', 'hex'));
  });

  it('maps a concurrent control-plane join to CONTROL_PLANE_JOIN_IN_PROGRESS', async () => {
    const s = stubs({ joiningNodes: { add: () => Promise.reject(new K8sError('CONTROL_PLANE_JOIN_IN_PROGRESS', 'maybe another node is already joining')) } });
    await assert.rejects(new TicketIssuer(s.deps).issueJoinTicket(request({ isControlPlane: true }), ctx), (e: unknown) => e instanceof JoinError && e.code === 'CONTROL_PLANE_JOIN_IN_PROGRESS');
  });

  it('control-plane file error fails only control-plane joins', async () => {
    const s = stubs({ controlPlaneFiles: { read: () => Promise.reject(new Error('ca.key missing')) } });
    await assert.rejects(new TicketIssuer(s.deps).issueJoinTicket(request({ isControlPlane: true }), ctx), /loading control-plane certificates and keys: ca.key missing/);
    await new TicketIssuer(s.deps).issueJoinTicket(request(), ctx);
  });
});

describe('TicketIssuer outbound deadlines (a frozen keyservice or apiserver)', () => {
  const never = <T>(): Promise<T> => new Promise<T>(() => undefined);
  const frozen: Array<[string, (s: ReturnType<typeof stubs>) => void, string, RegExp]> = [
    ['keyservice', (s) => (s.deps.keys = { getDataKey: () => never() }), 'KEYSERVICE_UNAVAILABLE', /getting measurement secret: no answer within 50 ms/],
    ['apiserver (bootstrap token)', (s) => (s.deps.tokens = { createJoinToken: () => never() }), 'KUBERNETES_UNAVAILABLE', /generating Kubernetes join arguments: no answer within 50 ms/],
    ['apiserver (components)', (s) => (s.deps.components.componentsReference = () => never()), 'KUBERNETES_UNAVAILABLE', /getting components ConfigMap name: no answer/],
    ['apiserver (JoiningNode)', (s) => (s.deps.joiningNodes = { add: () => never() }), 'KUBERNETES_UNAVAILABLE', /adding node to joining nodes: no answer/],
  ];
  for (const [name, freeze, code, message] of frozen) {
    it(`a frozen ${name} fails the ticket with ${code} after the deadline`, async () => {
      const s = stubs({ outboundTimeoutMs: 50 });
      freeze(s);
      const started = Date.now();
      await assert.rejects(new TicketIssuer(s.deps).issueJoinTicket(request(), ctx), (e: unknown) => e instanceof JoinError && e.code === code && message.test(e.message));
      assert.ok(Date.now() - started < 2000);
    });
  }

  it('a frozen certSANs read only costs its deadline: the ticket is still issued', async () => {
    const s = stubs({ outboundTimeoutMs: 50, certSans: { certSans: () => never() } });
    const res = await new TicketIssuer(s.deps).issueJoinTicket(request(), ctx);
    assert.ok(res.token);
  });

  it('a client cancelling stops the wait at once', async () => {
    const s = stubs({ outboundTimeoutMs: 60_000, keys: { getDataKey: () => never() } });
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 20);
    await assert.rejects(new TicketIssuer(s.deps).issueJoinTicket(request(), { ...ctx, signal: abort.signal }), /cancelled by the client/);
  });

  it('rejoin tickets have the same deadline', async () => {
    const s = stubs({ outboundTimeoutMs: 50, keys: { getDataKey: () => never() } });
    await assert.rejects(new TicketIssuer(s.deps).issueRejoinTicket({ diskUuid: UUID }, ctx), (e: unknown) => e instanceof JoinError && e.code === 'KEYSERVICE_UNAVAILABLE');
  });
});

describe('TicketIssuer.issueRejoinTicket (TestIssueRejoinTicket)', () => {
  it('returns disk key and measurement secret only', async () => {
    const { deps, calls } = stubs();
    const res = await new TicketIssuer(deps).issueRejoinTicket({ diskUuid: UUID }, ctx);
    assert.deepEqual(res, { stateDiskKey: Buffer.from('010203', 'hex'), measurementSecret: Buffer.from('070809', 'hex') });
    assert.deepEqual(calls, ['key:measurementSecret', `key:${UUID}`]);
  });

  it('fails with KEYSERVICE_UNAVAILABLE on a key error and validates the UUID first', async () => {
    const s = stubs();
    delete s.keys[UUID];
    await assert.rejects(new TicketIssuer(s.deps).issueRejoinTicket({ diskUuid: UUID }, ctx), (e: unknown) => e instanceof JoinError && e.code === 'KEYSERVICE_UNAVAILABLE');
    assert.throws(() => parseRejoinRequest({ diskUuid: '' }), (e: unknown) => e instanceof JoinError && e.code === 'INVALID_REQUEST');
  });
});
