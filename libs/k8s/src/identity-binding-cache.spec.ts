import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type * as k8s from '@kubernetes/client-node';
import type { ConfigMapFeed } from './identity-binding-cache.js';
import { WatchedIdentityBindings } from './identity-binding-cache.js';
import { identityBindingName, type IdentityBinding } from './identity-bindings.js';

const binding = (n: number, akDigest = `sha256:${'ab'.repeat(32)}`): IdentityBinding => ({
  diskUuid: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  akDigest,
  nodeName: `worker-${n}`,
  role: 'Worker',
  createdAt: '2026-11-26T10:00:00.000Z',
});
const configMap = (b: IdentityBinding, rv = '1'): k8s.V1ConfigMap => ({ metadata: { name: identityBindingName(b.diskUuid), resourceVersion: rv }, data: { ...b } });

/** The apiserver's bindings (create-only) and a feed over them whose watch the test drives. */
function world() {
  const stored = new Map<string, IdentityBinding>();
  const calls = { get: 0, create: 0, list: 0, watch: 0 };
  let emit: ((type: string, cm: k8s.V1ConfigMap) => void) | undefined;
  let end: ((err?: unknown) => void) | undefined;
  let listFails = false;
  const direct = {
    async get(uuid: string) {
      calls.get++;
      return stored.get(uuid.toLowerCase());
    },
    async create(b: IdentityBinding) {
      calls.create++;
      if (stored.has(b.diskUuid)) return 'exists' as const;
      stored.set(b.diskUuid, b);
      return 'created' as const;
    },
  };
  const feed: ConfigMapFeed = {
    async list() {
      calls.list++;
      if (listFails) throw new Error('apiserver unavailable');
      return { items: [...stored.values()].map((b) => configMap(b)), resourceVersion: '1' };
    },
    async watch(_rv, onEvent, onDone) {
      calls.watch++;
      emit = onEvent;
      end = onDone;
      return { abort: () => (emit = end = undefined) };
    },
  };
  return { stored, calls, direct, feed, emit: (t: string, cm: k8s.V1ConfigMap) => emit?.(t, cm), end: (err?: unknown) => end?.(err), failLists: (v: boolean) => (listFails = v) };
}

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), 'condition not reached');
};

describe('WatchedIdentityBindings (docs/adr/0038)', () => {
  it('asks the apiserver until the list is in, then answers from the cache without a call', async () => {
    const w = world();
    w.stored.set(binding(1).diskUuid, binding(1));
    const cache = new WatchedIdentityBindings(w.direct, w.feed, { retryMs: 10 });
    assert.deepEqual(await cache.get(binding(1).diskUuid), binding(1), 'not started: a GET');
    assert.equal(w.calls.get, 1);
    cache.start();
    await until(() => cache.synced);
    assert.deepEqual(await cache.get(binding(1).diskUuid.toUpperCase()), binding(1));
    assert.equal(await cache.get(binding(2).diskUuid), undefined);
    assert.equal(w.calls.get, 1, 'no GET while in sync');
    cache.stop();
    assert.equal(cache.synced, false);
  });

  it('follows the watch: another writer\'s binding appears, a deleted one goes', async () => {
    const w = world();
    const cache = new WatchedIdentityBindings(w.direct, w.feed, { retryMs: 10 });
    cache.start();
    await until(() => cache.synced && w.calls.watch === 1);
    w.emit('ADDED', configMap(binding(3), '5'));
    w.emit('ADDED', { metadata: { name: 'kubeadm-config', resourceVersion: '6' }, data: { x: 'y' } });
    assert.deepEqual(await cache.get(binding(3).diskUuid), binding(3));
    w.emit('DELETED', configMap(binding(3), '7'));
    assert.equal(await cache.get(binding(3).diskUuid), undefined);
    w.end(); // the server ended the watch: watch again from the last version, still in sync
    await until(() => w.calls.watch === 2);
    assert.equal(cache.synced, true);
    assert.equal(w.calls.list, 1);
    cache.stop();
  });

  it('creation stays create-only through the apiserver; either answer is in the cache at once', async () => {
    const w = world();
    const cache = new WatchedIdentityBindings(w.direct, w.feed, { retryMs: 10 });
    cache.start();
    await until(() => cache.synced);
    assert.equal(await cache.create(binding(4)), 'created');
    assert.deepEqual(await cache.get(binding(4).diskUuid), binding(4), 'own creation seen before its watch event');
    // Another replica bound disk 5 an instant ago; the watch has not told us yet.
    w.stored.set(binding(5).diskUuid, binding(5, `sha256:${'cd'.repeat(32)}`));
    assert.equal(await cache.get(binding(5).diskUuid), undefined, 'stale for the watch latency');
    assert.equal(await cache.create(binding(5)), 'exists', 'the apiserver decides the race');
    assert.equal((await cache.get(binding(5).diskUuid))?.akDigest, `sha256:${'cd'.repeat(32)}`, 'fetched at once for the retry');
    assert.equal(w.calls.create, 2);
    cache.stop();
  });

  it('a watch error or ERROR event puts lookups back on the apiserver until a new list is in', async () => {
    const w = world();
    const cache = new WatchedIdentityBindings(w.direct, w.feed, { retryMs: 20 });
    cache.start();
    await until(() => cache.synced);
    w.failLists(true);
    w.end(new Error('connection reset'));
    assert.equal(cache.synced, false);
    w.stored.set(binding(6).diskUuid, binding(6));
    assert.deepEqual(await cache.get(binding(6).diskUuid), binding(6), 'a GET while out of sync');
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(cache.synced, false, 'lists keep failing');
    w.failLists(false);
    await until(() => cache.synced);
    const gets = w.calls.get;
    assert.deepEqual(await cache.get(binding(6).diskUuid), binding(6));
    assert.equal(w.calls.get, gets);
    w.emit('ERROR', { metadata: {}, message: 'too old resource version' } as k8s.V1ConfigMap);
    assert.equal(cache.synced, false);
    await until(() => cache.synced);
    cache.stop();
  });

  it('a watch that does not end within its timeout and grace counts as stalled', async () => {
    const w = world();
    const cache = new WatchedIdentityBindings(w.direct, w.feed, { retryMs: 1000, watchTimeoutS: 0.02, stallGraceMs: 20 });
    cache.start();
    await until(() => cache.synced);
    await until(() => !cache.synced);
    cache.stop();
  });
});
