import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { createNopLogger } from '@asterism/logger';
import { WORKSPACE_ROOT } from '@asterism/testing';
import { variantDescriptor } from '@asterism/attestation';
import { CertCache, CertCacheError, splitKdsChain, type CertCacheStore, type KdsChainSource } from './cert-cache.js';

const testdata = resolve(WORKSPACE_ROOT, 'testdata');
const ARK = readFileSync(resolve(testdata, 'amd/milan-ark.pem'), 'utf8');
const ASK = readFileSync(resolve(testdata, 'amd/milan-ask.pem'), 'utf8');
const CHAIN = readFileSync(resolve(testdata, 'snp/certchain.pem'), 'utf8');
const VLEK_CHAIN = readFileSync(resolve(testdata, 'snp/vlekcertchain.pem'), 'utf8');

class MemoryStore implements CertCacheStore {
  data: Record<string, string> | null = null;
  ops: string[] = [];
  failGet = false;
  failUpdate = false;
  createRace = false;
  async get() {
    this.ops.push('get');
    if (this.failGet) throw new Error('apiserver down');
    return this.data ? { data: { ...this.data } } : null;
  }
  async create(_ns: string, _name: string, data: Record<string, string>) {
    this.ops.push('create');
    if (this.createRace) {
      this.data = { ask: ASK, ark: ARK };
      throw Object.assign(new Error('exists'), { code: 'K8S_ALREADY_EXISTS' });
    }
    this.data = data;
  }
  async updateKeys(_ns: string, _name: string, data: Record<string, string>) {
    this.ops.push('update');
    if (this.failUpdate) throw new Error('forbidden');
    this.data = { ...(this.data ?? {}), ...data };
  }
}

class StubKds implements KdsChainSource {
  calls: string[] = [];
  constructor(private readonly answer: string | Error) {}
  async certChain(signer: 'vcek' | 'vlek') {
    this.calls.push(signer);
    if (this.answer instanceof Error) throw this.answer;
    return this.answer;
  }
}

const norm = (pem: string | null) => pem?.replace(/\s+/g, '');

describe('CertCache (TestCreateCertChainCache)', () => {
  it('uses both cached certificates without asking KDS', async () => {
    const store = new MemoryStore();
    store.data = { ask: ASK, ark: ARK };
    const kds = new StubKds(new Error('must not be called'));
    const chain = await new CertCache(store, kds, createNopLogger()).load('vcek');
    assert.equal(norm(chain.ask), norm(ASK));
    assert.equal(norm(chain.ark), norm(ARK));
    assert.deepEqual(kds.calls, []);
  });

  it('creates the ConfigMap from KDS when it does not exist', async () => {
    const store = new MemoryStore();
    const kds = new StubKds(CHAIN);
    const chain = await new CertCache(store, kds, createNopLogger()).load('vcek');
    assert.equal(norm(chain.ark), norm(ARK));
    assert.match(chain.ask!, /BEGIN CERTIFICATE/);
    assert.deepEqual(store.ops, ['get', 'create']);
    assert.deepEqual(kds.calls, ['vcek']);
  });

  it('fills only the missing key and keeps the cached one (even if it is another ASK)', async () => {
    const store = new MemoryStore();
    store.data = { ask: ASK, ark: '' };
    const chain = await new CertCache(store, new StubKds(VLEK_CHAIN), createNopLogger()).load('vlek');
    assert.equal(norm(chain.ask), norm(ASK), 'the cached ASK wins over the KDS ASVK');
    assert.equal(norm(chain.ark), norm(ARK));
    assert.deepEqual(store.ops, ['get', 'update']);
  });

  it('re-reads the ConfigMap when another replica created it first', async () => {
    const store = new MemoryStore();
    store.createRace = true;
    const chain = await new CertCache(store, new StubKds(CHAIN), createNopLogger()).load('vcek');
    assert.equal(norm(chain.ark), norm(ARK));
    assert.deepEqual(store.ops, ['get', 'create', 'get']);
  });

  const failures: Array<[string, (s: MemoryStore) => StubKds, string]> = [
    ['get error', (s) => ((s.failGet = true), new StubKds(CHAIN)), 'K8S_UNAVAILABLE'],
    ['update error', (s) => ((s.data = { ask: ASK }), (s.failUpdate = true), new StubKds(CHAIN)), 'K8S_UNAVAILABLE'],
    ['KDS error', () => new StubKds(new Error('429')), 'KDS_UNAVAILABLE'],
    ['empty KDS answer', () => new StubKds(''), 'KDS_UNAVAILABLE'],
    ['garbage in the cache', (s) => ((s.data = { ask: 'not a cert', ark: ARK }), new StubKds(CHAIN)), 'CERT_CACHE_INVALID'],
  ];
  for (const [name, setup, code] of failures) {
    it(`fails with ${code} on ${name}`, async () => {
      const store = new MemoryStore();
      const kds = setup(store);
      await assert.rejects(new CertCache(store, kds, createNopLogger()).load('vcek'), (e: unknown) => e instanceof CertCacheError && e.code === code);
    });
  }

  it('knows which variants need a cache (their descriptors\' amdSigner)', () => {
    assert.equal(variantDescriptor('azure-sev-snp').amdSigner, 'vcek');
    assert.equal(variantDescriptor('aws-sev-snp').amdSigner, 'vlek');
    assert.equal(variantDescriptor('qemu-vtpm').amdSigner, undefined);
  });

  it('splits the real KDS chains by subject', () => {
    const vcek = splitKdsChain(CHAIN);
    assert.ok(vcek.ask && vcek.ark);
    const vlek = splitKdsChain(VLEK_CHAIN);
    assert.ok(vlek.ask && vlek.ark);
    assert.notEqual(norm(vlek.ask), norm(vcek.ask));
  });
});
