/**
 * The identity binding watch cache (docs/adr/0038) against a REAL kube-apiserver: two joinservice
 * replicas' caches over the same bindings. Lookups come from the watch (no GET), a binding one
 * replica creates reaches the other, a deleted one goes, and a concurrent first join of one disk
 * through both replicas is still decided by the apiserver's create-only write.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { isAsterismError } from '@asterism/errors';
import {
  BINDING_NAMESPACE,
  clientsFromConfig,
  ConfigMapIdentityBindings,
  configMapFeed,
  ConfigMapStore,
  HttpsConfigMapCreator,
  identityBindingName,
  WatchedIdentityBindings,
  type IdentityBinding,
  type KubeClients,
} from '@asterism/k8s';
import { startTestControlPlane, testenvUnavailable, type TestControlPlane } from '@asterism/k8s-testenv';

const skip = testenvUnavailable();

const binding = (disk: string, node: string, ak = 'ab'): IdentityBinding => ({ diskUuid: disk, akDigest: `sha256:${ak.repeat(32)}`, nodeName: node, role: 'Worker', createdAt: new Date().toISOString() });

async function until(what: string, cond: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) assert.fail(`${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('WatchedIdentityBindings against a real kube-apiserver', { skip }, () => {
  let cp: TestControlPlane;
  let clients: KubeClients;
  const replicas: Array<{ cache: WatchedIdentityBindings; gets: () => number }> = [];

  before(async () => {
    cp = await startTestControlPlane();
    const config = new k8s.KubeConfig();
    config.loadFromString(cp.adminKubeconfig);
    clients = clientsFromConfig(config);
    for (let i = 0; i < 2; i++) {
      // The joinservice's wiring: reads by client-node, creation by a direct HTTPS POST.
      const configMaps = new ConfigMapStore(clients.core);
      const creator = new HttpsConfigMapCreator(clients.config, () => Promise.reject(new Error('no proxy here')));
      const direct = new ConfigMapIdentityBindings({ get: (ns, name) => configMaps.get(ns, name), create: (...a) => creator.create(...a) });
      let gets = 0;
      const counted = { get: (d: string) => (gets++, direct.get(d)), create: (b: IdentityBinding) => direct.create(b) };
      const cache = new WatchedIdentityBindings(counted, configMapFeed(clients, 5), { retryMs: 100 });
      cache.start();
      replicas.push({ cache, gets: () => gets });
    }
  });

  after(async () => {
    for (const r of replicas) r.cache.stop();
    await cp?.stop();
  });

  it('serves lookups from the watch and sees the other replica\'s bindings and deletions', async () => {
    const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    await until('both caches in sync', () => a.cache.synced && b.cache.synced);
    const disk = '11111111-0000-4000-8000-000000000001';
    assert.equal(await a.cache.create(binding(disk, 'worker-1')), 'created');
    assert.equal((await a.cache.get(disk))?.nodeName, 'worker-1');
    await until('replica b sees the binding', async () => (await b.cache.get(disk))?.nodeName === 'worker-1');
    assert.equal(a.gets() + b.gets(), 0, 'no GET while in sync');
    await clients.core.deleteNamespacedConfigMap({ namespace: BINDING_NAMESPACE, name: identityBindingName(disk) });
    await until('both caches drop the deleted binding', async () => (await a.cache.get(disk)) === undefined && (await b.cache.get(disk)) === undefined);
    // Watches end every 5 s here and are renewed from the last version without a new list.
    await new Promise((r) => setTimeout(r, 6_000));
    assert.ok(a.cache.synced && b.cache.synced);
    assert.equal(a.gets() + b.gets(), 0);
  });

  it('the direct HTTPS create writes what client-node writes and maps the apiserver\'s refusals', async () => {
    const creator = new HttpsConfigMapCreator(clients.config, () => Promise.reject(new Error('no proxy here')));
    await creator.create(BINDING_NAMESPACE, 'asterism-bench-create', { a: 'b' }, { immutable: true });
    const cm = await clients.core.readNamespacedConfigMap({ namespace: BINDING_NAMESPACE, name: 'asterism-bench-create' });
    assert.deepEqual([cm.data, cm.immutable], [{ a: 'b' }, true]);
    await assert.rejects(creator.create(BINDING_NAMESPACE, 'asterism-bench-create', { a: 'c' }), (e: unknown) => isAsterismError(e, 'K8S_ALREADY_EXISTS'));
    await assert.rejects(creator.create(BINDING_NAMESPACE, 'Not_A_Name', { a: 'b' }), (e: unknown) => isAsterismError(e, 'K8S_INVALID'));
    const anonymous = new k8s.KubeConfig();
    anonymous.loadFromOptions({ clusters: clients.config.clusters, users: [{ name: 'nobody' }], contexts: [{ name: 'c', cluster: clients.config.getCurrentCluster()!.name, user: 'nobody' }], currentContext: 'c' });
    await assert.rejects(new HttpsConfigMapCreator(anonymous, () => Promise.reject(new Error('no proxy here'))).create(BINDING_NAMESPACE, 'x', {}), (e: unknown) => isAsterismError(e, 'K8S_FORBIDDEN'));
  });

  it('a concurrent first join of one disk through both replicas: exactly one binding is created', async () => {
    const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    for (let i = 0; i < 5; i++) {
      const disk = `22222222-0000-4000-8000-00000000000${i}`;
      const results = await Promise.all([a.cache.create(binding(disk, 'worker-a', 'aa')), b.cache.create(binding(disk, 'worker-b', 'bb'))]);
      assert.deepEqual([...results].sort(), ['created', 'exists']);
      const winner = results[0] === 'created' ? 'worker-a' : 'worker-b';
      assert.equal((await a.cache.get(disk))?.nodeName, winner, 'the loser\'s cache holds the winner at once');
      assert.equal((await b.cache.get(disk))?.nodeName, winner);
    }
  });
});
