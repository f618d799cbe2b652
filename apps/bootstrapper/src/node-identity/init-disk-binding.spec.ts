/**
 * The init flow's disk binding stage (docs/adr/0008): the real InitFlow and InitDiskBinder over
 * stubs that record every call, so the order (after the cluster exists, before the services and
 * the success answer) is asserted with the outcome.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { encodeDocument, Variant, type Issuer } from '@asterism/attestation';
import { encodeClusterKmsUri } from '@asterism/crypto';
import { K8sError, type IdentityBinding } from '@asterism/k8s';
import { createLogger } from '@asterism/logger';
import { NodeLock } from '@asterism/nodelock';
import type { init } from '@asterism/proto';
import bcrypt from 'bcryptjs';
import { InitFailure, InitFlow } from '../initserver/init-flow.js';
import { NodeFileWriter } from '../state/file-writer.js';
import { InitDiskBinder, type DiskBindingStore } from './init-disk-binding.js';
import { readNodeIdentity } from './node-self.js';

const HASH = bcrypt.hashSync('password', 4);
const DISK = 'AAAAAAAA-0000-4000-8000-00000000000A';
const disk = DISK.toLowerCase();
const KUBECONFIG = Buffer.from('admin kubeconfig of the new cluster');
const NOW = new Date('2026-11-25T12:00:00Z');
const digest = (ak: string) => `sha256:${createHash('sha256').update(ak).digest('hex')}`;

/** A qemu-vtpm issuer whose documents carry `ak`; records the nonces it was asked for. */
function issuerWith(ak: string, events: string[], nonces: Buffer[]): Issuer {
  return {
    variant: Variant.fromString('qemu-vtpm'),
    async issue(_userData, nonce) {
      events.push('issue');
      nonces.push(Buffer.from(nonce));
      const attestation = { akPub: Buffer.from(ak), quotes: [], eventLog: Buffer.alloc(0), instanceInfo: null, canonicalEventLog: Buffer.alloc(0), akCert: Buffer.alloc(0), intermediateCerts: [], teeAttestation: null };
      return encodeDocument({ attestation, instanceInfo: null, userData: Buffer.alloc(32) });
    },
  };
}

/** Bindings in memory with create-only semantics; `fail` scripts the apiserver's answer per create call. */
function memoryStore(events: string[], existing: IdentityBinding[], fail: (call: number) => Error | 'hang' | undefined) {
  const bindings = new Map(existing.map((b) => [b.diskUuid, b]));
  let creates = 0;
  const store: DiskBindingStore = {
    async get(uuid) {
      events.push('get');
      return bindings.get(uuid.toLowerCase());
    },
    async create(b) {
      events.push('create');
      const f = fail(++creates);
      if (f === 'hang') return new Promise<never>(() => undefined);
      if (f) throw f;
      if (bindings.has(b.diskUuid)) return 'exists';
      bindings.set(b.diskUuid, b);
      return 'created';
    },
  };
  return { store, bindings };
}

interface Case {
  name: string;
  existing?: IdentityBinding[];
  fail?: (call: number) => Error | 'hang' | undefined;
  /** InitFailure code, or undefined for success. */
  code?: string;
  message?: RegExp;
  events: string[];
  /** The binding left in the store. */
  stored?: Partial<IdentityBinding>;
}

const mine: IdentityBinding = { diskUuid: disk, akDigest: digest('ak-cp0'), nodeName: 'control-plane-0', role: 'ControlPlane', createdAt: '2026-11-01T00:00:00.000Z' };
const unavailable = () => new K8sError('K8S_UNAVAILABLE', 'creating ConfigMap kube-system/asterism-node-identity-…: connect ECONNREFUSED');

const cases: Case[] = [
  {
    name: 'created: the disk is bound (lower-case UUID, AK digest, metadata name, ControlPlane) after the cluster exists, before the services and the answer',
    events: ['lock', 'initCluster', 'issue', 'create', 'startServices'],
    stored: { diskUuid: disk, akDigest: digest('ak-cp0'), nodeName: 'control-plane-0', role: 'ControlPlane', createdAt: NOW.toISOString() },
  },
  {
    name: 'already bound to me: an equal binding (same AK digest and name) is accepted and left as it is',
    existing: [mine],
    events: ['lock', 'initCluster', 'issue', 'create', 'get', 'startServices'],
    stored: mine,
  },
  {
    name: 'bound to another AK: init fails DISK_BOUND_TO_OTHER_IDENTITY, no services, no answer',
    existing: [{ ...mine, akDigest: digest('ak-worker-9'), nodeName: 'worker-9', role: 'Worker' }],
    code: 'DISK_BOUND_TO_OTHER_IDENTITY',
    message: /binding disk to attestation key: disk aaaaaaaa-.* is already bound to node "worker-9" with another attestation key/,
    events: ['lock', 'initCluster', 'issue', 'create', 'get'],
    stored: { nodeName: 'worker-9' },
  },
  {
    name: 'bound to this AK under another name: DISK_BOUND_TO_OTHER_IDENTITY',
    existing: [{ ...mine, nodeName: 'worker-9' }],
    code: 'DISK_BOUND_TO_OTHER_IDENTITY',
    message: /under the node name "worker-9", not "control-plane-0"/,
    events: ['lock', 'initCluster', 'issue', 'create', 'get'],
  },
  {
    name: 'API failure: an apiserver that stays down fails init (STEP_FAILED) after 3 tries, no services',
    fail: unavailable,
    code: 'STEP_FAILED',
    message: /binding disk to attestation key: creating ConfigMap .*ECONNREFUSED/,
    events: ['lock', 'initCluster', 'issue', 'create', 'create', 'create'],
  },
  {
    name: 'API failure that another try cannot cure (Forbidden): STEP_FAILED at once',
    fail: () => new K8sError('K8S_FORBIDDEN', 'configmaps is forbidden'),
    code: 'STEP_FAILED',
    message: /forbidden/,
    events: ['lock', 'initCluster', 'issue', 'create'],
  },
  {
    name: 'API failure once, then the apiserver answers: bound on the second try',
    fail: (n) => (n === 1 ? unavailable() : undefined),
    events: ['lock', 'initCluster', 'issue', 'create', 'create', 'startServices'],
    stored: { akDigest: digest('ak-cp0') },
  },
  {
    name: 'API frozen: every try ends at its deadline, init fails STEP_FAILED',
    fail: () => 'hang',
    code: 'STEP_FAILED',
    message: /did not answer within 50 ms/,
    events: ['lock', 'initCluster', 'issue', 'create', 'create', 'create'],
  },
];

function world(c: Case) {
  const events: string[] = [];
  const nonces: Buffer[] = [];
  const kubeconfigs: Buffer[] = [];
  const { store, bindings } = memoryStore(events, c.existing ?? [], c.fail ?? (() => undefined));
  const lines: Array<Record<string, unknown>> = [];
  const stream = new PassThrough();
  stream.on('data', (d: Buffer) => d.toString().split('\n').filter(Boolean).forEach((l) => lines.push(JSON.parse(l) as Record<string, unknown>)));
  const logger = createLogger({ component: 'test', level: 'info', stream });
  const flow = new InitFlow({
    initSecretHash: HASH,
    lock: new NodeLock({ markNodeAsBootstrapped: async () => void events.push('lock') }),
    disk: { uuid: async () => DISK, updatePassphrase: async () => undefined, markForReset: async () => undefined },
    files: new NodeFileWriter(mkdtempSync(join(tmpdir(), 'init-binding-'))),
    ssh: { install: async () => undefined },
    host: { addresses: async () => [], hostname: async () => 'node-0' },
    cluster: {
      initCluster: async () => (events.push('initCluster'), KUBECONFIG),
      startServices: async () => void events.push('startServices'),
    },
    // The init flow reads the metadata once and hands the (Kubernetes-compliant) name on.
    identity: { read: (signal) => readNodeIdentity({ self: async () => ({ Name: 'Control_Plane-0', ProviderID: '', Role: 'ControlPlane', VPCIP: '10.0.0.1', SecondaryIPRange: '', AliasIPRanges: null }) }, signal) },
    diskBinding: new InitDiskBinder({
      issuer: issuerWith('ak-cp0', events, nonces),
      storeFor: (kc) => (kubeconfigs.push(kc), store),
      logger,
      now: () => NOW,
      retry: { attempts: 3, delayMs: 1 },
      callTimeoutMs: 50,
    }),
    onLocked: () => undefined,
    logger,
  });
  return { flow, events, nonces, kubeconfigs, bindings, lines };
}

const request = (): init.InitRequest => ({
  kmsUri: encodeClusterKmsUri({ key: Buffer.alloc(32, 0), salt: Buffer.alloc(32, 1) }),
  storageUri: 'storage://no-store',
  measurementSalt: Buffer.alloc(32, 2),
  kubernetesVersion: 'v1.34.2',
  conformanceMode: false,
  kubernetesComponents: [],
  initSecret: Buffer.from('password'),
  clusterName: '',
  apiserverCertSans: [],
  serviceCidr: '',
});

describe('init: binding the disk to the node\'s attestation key (docs/adr/0008)', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const w = world(c);
      const run = w.flow.run(request());
      if (c.code) await assert.rejects(run, (e: unknown) => e instanceof InitFailure && e.code === c.code && e.afterLock && (!c.message || c.message.test(e.message)));
      else assert.equal((await run).kubeconfig, KUBECONFIG);
      assert.deepEqual(w.events, c.events);
      assert.ok(w.kubeconfigs.every((k) => k === KUBECONFIG), 'the store is reached with the admin kubeconfig initCluster returned');
      for (const [field, value] of Object.entries(c.stored ?? {})) assert.equal(w.bindings.get(disk)?.[field as keyof IdentityBinding], value, `stored ${field}`);
      // The stage is timed like every init step (init's timing stays visible per step).
      const step = w.lines.find((l) => l.step === 'binding disk to attestation key');
      assert.equal(typeof step?.durationMs, 'number', 'the stage logs its duration');
      assert.equal(step?.msg, c.code ? 'init step finished failed' : 'init step finished');
    });
  }

  it('issues a fresh document (random 32-byte nonce) for every init', async () => {
    const a = world(cases[0]!);
    const b = world(cases[0]!);
    await a.flow.run(request());
    await b.flow.run(request());
    assert.equal(a.nonces[0]?.length, 32);
    assert.notDeepEqual(a.nonces[0], b.nonces[0]);
  });
});
