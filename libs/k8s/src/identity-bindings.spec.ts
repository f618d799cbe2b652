import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type * as k8s from '@kubernetes/client-node';
import { K8sError } from './errors.js';
import { BINDING_NAMESPACE, ConfigMapIdentityBindings, identityBindingName, type IdentityBinding } from './identity-bindings.js';

/** ConfigMaps in memory with the apiserver's create-only answer (409 AlreadyExists). */
function memoryConfigMaps(fail?: K8sError) {
  const maps = new Map<string, k8s.V1ConfigMap>();
  return {
    maps,
    async get(namespace: string, name: string) {
      if (fail) throw fail;
      return maps.get(`${namespace}/${name}`) ?? null;
    },
    async create(namespace: string, name: string, data: Record<string, string>, options: { immutable?: boolean } = {}) {
      if (fail) throw fail;
      if (maps.has(`${namespace}/${name}`)) throw new K8sError('K8S_ALREADY_EXISTS', `configmaps "${name}" already exists`);
      maps.set(`${namespace}/${name}`, { metadata: { name, namespace }, data, ...(options.immutable ? { immutable: true } : {}) });
    },
  };
}

const UPPER = 'AAAAAAAA-0000-4000-8000-00000000000A';
const binding: IdentityBinding = { diskUuid: UPPER.toLowerCase(), akDigest: `sha256:${'ab'.repeat(32)}`, nodeName: 'control-plane-0', role: 'ControlPlane', createdAt: '2026-11-24T10:00:00.000Z' };

describe('ConfigMapIdentityBindings (docs/adr/0008)', () => {
  it('creates one immutable kube-system ConfigMap per lower-case disk UUID and reads it back in any case', async () => {
    const cms = memoryConfigMaps();
    const store = new ConfigMapIdentityBindings(cms);
    assert.equal(await store.create(binding), 'created');
    const cm = cms.maps.get(`${BINDING_NAMESPACE}/asterism-node-identity-${UPPER.toLowerCase()}`);
    assert.equal(cm?.immutable, true);
    assert.deepEqual(cm?.data, { ...binding });
    assert.deepEqual(await store.get(UPPER), binding);
    assert.equal(identityBindingName(UPPER), `asterism-node-identity-${UPPER.toLowerCase()}`);
  });

  it('answers `exists` for a second create (another writer was first) and leaves the first binding', async () => {
    const cms = memoryConfigMaps();
    const store = new ConfigMapIdentityBindings(cms);
    await store.create(binding);
    assert.equal(await store.create({ ...binding, diskUuid: UPPER, nodeName: 'worker-9', akDigest: `sha256:${'cd'.repeat(32)}` }), 'exists');
    assert.equal((await store.get(binding.diskUuid))?.nodeName, 'control-plane-0');
  });

  it('an unbound disk is undefined; API failures other than AlreadyExists propagate typed', async () => {
    assert.equal(await new ConfigMapIdentityBindings(memoryConfigMaps()).get(UPPER), undefined);
    const down = new ConfigMapIdentityBindings(memoryConfigMaps(new K8sError('K8S_UNAVAILABLE', 'connect ECONNREFUSED')));
    await assert.rejects(down.create(binding), (e: unknown) => e instanceof K8sError && e.code === 'K8S_UNAVAILABLE');
    await assert.rejects(down.get(UPPER), (e: unknown) => e instanceof K8sError && e.code === 'K8S_UNAVAILABLE');
  });
});
