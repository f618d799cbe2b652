import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { encodeDocument, Variant } from '@asterism/attestation';
import { createNopLogger } from '@asterism/logger';
import { MetadataError, type Role } from '@asterism/metadata';
import type { IdentityBinding } from '@asterism/k8s';
import { attestationKeyOf, peerAttestationKeyDigest, peerIp, resolvePeer } from '../identity/peer-identity.js';
import { JoinError } from './errors.js';
import { IdentityBindingStage, type IdentityBindingStore, type JoinIdentityClaim } from './identity-binding.js';

const VTPM = Variant.fromString('qemu-vtpm');
const UUID_A = '0a1b2c3d-0000-4000-8000-00000000000a';
const UUID_B = '0a1b2c3d-0000-4000-8000-00000000000b';

/** A qemu-vtpm document whose only distinguishing part is its AK. */
function vtpmDocument(ak: string): Buffer {
  const attestation = { akPub: Buffer.from(ak), quotes: [], eventLog: Buffer.alloc(0), instanceInfo: null, canonicalEventLog: Buffer.alloc(0), akCert: Buffer.alloc(0), intermediateCerts: [], teeAttestation: null };
  return encodeDocument({ attestation, instanceInfo: null, userData: Buffer.alloc(32) });
}

const digest = (ak: string) => `sha256:${createHash('sha256').update(ak).digest('hex')}`;

/** The cluster: peers by "ip:port", AK per peer, metadata per IP, bindings in memory. */
function world(opts: { bindings?: IdentityBinding[]; raceOn?: string; metadataDown?: boolean } = {}) {
  const akOf: Record<string, string> = { '10.0.0.1:5000': 'ak-cp0', '10.0.0.2:5000': 'ak-w0', '10.0.0.3:5000': 'ak-w1', '10.0.0.9:5000': 'ak-stranger' };
  const meta: Record<string, { name: string; role: Role }> = {
    '10.0.0.1': { name: 'control-plane-0', role: 'ControlPlane' },
    '10.0.0.2': { name: 'worker-0', role: 'Worker' },
    '10.0.0.3': { name: 'worker-1', role: 'Worker' },
  };
  const bindings = new Map((opts.bindings ?? []).map((b) => [b.diskUuid.toLowerCase(), b]));
  const writes: string[] = [];
  const store: IdentityBindingStore = {
    async get(uuid) {
      return bindings.get(uuid.toLowerCase());
    },
    async create(b) {
      writes.push(`${b.diskUuid}:${b.nodeName}:${b.role}`);
      if (opts.raceOn === b.diskUuid || bindings.has(b.diskUuid.toLowerCase())) return 'exists';
      bindings.set(b.diskUuid.toLowerCase(), b);
      return 'created';
    },
  };
  const stage = new IdentityBindingStage({
    directory: {
      async lookup(ip) {
        if (opts.metadataDown) throw new MetadataError('METADATA_UNAVAILABLE', 'GET /peers: connection refused');
        return meta[ip];
      },
    },
    store,
    logger: createNopLogger(),
    now: () => new Date('2026-11-23T10:00:00Z'),
  });
  /** The peer as the boundary resolves it: its IP and the document aTLS accepted from it. */
  const peer = (address: string) => resolvePeer(address, (a) => (akOf[a] ? { variant: VTPM, document: vtpmDocument(akOf[a]) } : undefined));
  return { stage, writes, bindings, peer };
}

const req = (nodeName: string, diskUuid = UUID_A, isControlPlane = false): JoinIdentityClaim => ({ diskUuid, nodeName, isControlPlane });

const boundA = (ak: string, nodeName: string): IdentityBinding => ({ diskUuid: UUID_A, akDigest: digest(ak), nodeName, role: 'Worker', createdAt: '' });

describe('IdentityBindingStage.checkJoin', () => {
  const cases: Array<{ name: string; peer: string; req: JoinIdentityClaim; bindings?: IdentityBinding[]; raceOn?: string; metadataDown?: boolean; code?: string; reason?: string; writes: string[] }> = [
    { name: 'first join binds the disk to the AK and the metadata name', peer: '10.0.0.2:5000', req: req('worker-0'), writes: [`${UUID_A}:worker-0:Worker`] },
    { name: 'join again with the same AK and name', peer: '10.0.0.2:5000', req: req('worker-0'), bindings: [boundA('ak-w0', 'worker-0')], writes: [] },
    { name: 'join again, disk UUID in upper case', peer: '10.0.0.2:5000', req: req('worker-0', UUID_A.toUpperCase()), bindings: [boundA('ak-w0', 'worker-0')], writes: [] },
    { name: 'control plane proven by metadata', peer: '10.0.0.1:5000', req: req('control-plane-0', UUID_B, true), writes: [`${UUID_B}:control-plane-0:ControlPlane`] },
    { name: "another node's disk", peer: '10.0.0.3:5000', req: req('worker-1'), bindings: [boundA('ak-w0', 'worker-0')], code: 'IDENTITY_MISMATCH', reason: 'DISK_BOUND_TO_OTHER_AK', writes: [] },
    { name: "a worker asking for control-plane-0's name", peer: '10.0.0.2:5000', req: req('control-plane-0', UUID_B), code: 'IDENTITY_MISMATCH', reason: 'NODE_NAME_MISMATCH', writes: [] },
    { name: 'a worker asking for control-plane files', peer: '10.0.0.2:5000', req: req('worker-0', UUID_B, true), code: 'IDENTITY_MISMATCH', reason: 'ROLE_NOT_CONTROL_PLANE', writes: [] },
    { name: 'a peer the metadata does not know', peer: '10.0.0.9:5000', req: req('worker-9'), code: 'IDENTITY_MISMATCH', reason: 'PEER_UNKNOWN', writes: [] },
    { name: 'an unattested connection', peer: '10.0.0.7:5000', req: req('worker-0'), code: 'IDENTITY_MISMATCH', reason: 'NOT_ATTESTED', writes: [] },
    { name: 'a concurrent first join won the create', peer: '10.0.0.2:5000', req: req('worker-0'), raceOn: UUID_A, code: 'IDENTITY_BINDING_RACE', writes: [`${UUID_A}:worker-0:Worker`] },
    { name: 'metadata source down: retryable, nothing written', peer: '10.0.0.2:5000', req: req('worker-0'), metadataDown: true, code: 'METADATA_UNAVAILABLE', writes: [] },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const w = world({ ...(c.bindings ? { bindings: c.bindings } : {}), ...(c.raceOn ? { raceOn: c.raceOn } : {}), ...(c.metadataDown ? { metadataDown: true } : {}) });
      const run = w.stage.checkJoin(c.req, w.peer(c.peer));
      if (c.code) await assert.rejects(run, (e: unknown) => e instanceof JoinError && e.code === c.code && (c.reason === undefined || e.details.reason === c.reason));
      else await run;
      assert.deepEqual(w.writes, c.writes);
    });
  }

  it('the binding written names the AK digest, the name and the role', async () => {
    const w = world();
    await w.stage.checkJoin(req('worker-0'), w.peer('10.0.0.2:5000'));
    assert.deepEqual(w.bindings.get(UUID_A), { diskUuid: UUID_A, akDigest: digest('ak-w0'), nodeName: 'worker-0', role: 'Worker', createdAt: '2026-11-23T10:00:00.000Z' });
  });
});

describe('IdentityBindingStage.checkRejoin', () => {
  const cases: Array<{ name: string; peer: string; bindings: IdentityBinding[]; reason?: string }> = [
    { name: 'same AK (e.g. after a reboot, new IP even)', peer: '10.0.0.2:5000', bindings: [boundA('ak-w0', 'worker-0')] },
    { name: 'another AK', peer: '10.0.0.3:5000', bindings: [boundA('ak-w0', 'worker-0')], reason: 'DISK_BOUND_TO_OTHER_AK' },
    { name: 'a disk that never joined', peer: '10.0.0.2:5000', bindings: [], reason: 'DISK_UNBOUND' },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const w = world({ bindings: c.bindings });
      const run = w.stage.checkRejoin({ diskUuid: UUID_A }, w.peer(c.peer));
      if (c.reason) await assert.rejects(run, (e: unknown) => e instanceof JoinError && e.code === 'IDENTITY_MISMATCH' && e.details.reason === c.reason);
      else await run;
    });
  }
});

describe('peer identity helpers', () => {
  it('the shared AK digest of an accepted document; an unreadable one is IDENTITY_MISMATCH carrying the attestation code', () => {
    assert.equal(peerAttestationKeyDigest(VTPM, vtpmDocument('ak-1')), digest('ak-1'));
    assert.notEqual(peerAttestationKeyDigest(VTPM, vtpmDocument('ak-1')), peerAttestationKeyDigest(VTPM, vtpmDocument('ak-2')));
    assert.equal(peerAttestationKeyDigest(Variant.fromString('dummy'), Buffer.from('{}')), 'none:dummy');
    assert.throws(() => peerAttestationKeyDigest(VTPM, Buffer.from('not json')), (e: unknown) => e instanceof JoinError && e.code === 'IDENTITY_MISMATCH' && e.details.reason === 'DOCUMENT_MALFORMED');
  });

  it('resolving a peer reads its attestation once; its AK digest is what the checks compare', () => {
    let lookups = 0;
    const peer = resolvePeer('[::ffff:10.0.0.2]:5000', () => (lookups++, { variant: VTPM, document: vtpmDocument('ak-1') }));
    assert.equal(lookups, 1);
    assert.equal(peer.ip, '10.0.0.2');
    assert.equal(attestationKeyOf(peer), digest('ak-1'));
    assert.equal(lookups, 1, 'no second lookup in the transport');
    assert.throws(() => attestationKeyOf(resolvePeer('10.0.0.7:1')), (e: unknown) => e instanceof JoinError && e.details.reason === 'NOT_ATTESTED');
  });

  const peers: Array<[string, string]> = [
    ['127.42.0.11:40000', '127.42.0.11'],
    ['[::1]:40000', '::1'],
    ['[::ffff:10.0.0.2]:40000', '10.0.0.2'],
  ];
  for (const [peer, ip] of peers) it(`peerIp(${peer})`, () => assert.equal(peerIp(peer), ip));
});
