/** Leader election on a REAL kube-apiserver's Lease: one leader, takeover after expiry, release. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { startTestControlPlane, testenvUnavailable, type TestControlPlane } from '@asterism/k8s-testenv';
import { LeaseElector } from './lease-elector.js';

const skip = testenvUnavailable();

describe('LeaseElector on a real kube-apiserver', { skip }, () => {
  let cp: TestControlPlane;
  let api: k8s.CoordinationV1Api;
  const lease = { namespace: 'default', name: 'monitor-test' };
  const timing = { leaseMs: 1500, retryMs: 300 };

  before(async () => {
    cp = await startTestControlPlane();
    api = cp.admin.config.makeApiClient(k8s.CoordinationV1Api);
  });
  after(async () => cp?.stop());

  it('of two candidates racing for a new Lease exactly one leads; the other stays follower while it is renewed', async () => {
    const a = new LeaseElector(api, lease, 'a', timing);
    const b = new LeaseElector(api, lease, 'b', timing);
    const [ra, rb] = await Promise.all([a.tryAcquireOrRenew(), b.tryAcquireOrRenew()]);
    assert.equal(Number(ra) + Number(rb), 1);
    const [leader, follower] = ra ? [a, b] : [b, a];
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(await leader.tryAcquireOrRenew(), true);
      assert.equal(await follower.tryAcquireOrRenew(), false, 'a renewed Lease is not taken over');
    }
    // The leader stops renewing (crashed): the follower takes over once the record is stale for leaseMs by its own clock.
    assert.equal(await follower.tryAcquireOrRenew(), false);
    await new Promise((r) => setTimeout(r, 1600));
    assert.equal(await follower.tryAcquireOrRenew(), true);
    const l = await api.readNamespacedLease(lease);
    assert.equal(l.spec?.holderIdentity, ra ? 'b' : 'a');
    assert.equal(l.spec?.leaseTransitions, 1);
    assert.equal(await leader.tryAcquireOrRenew(), false, 'the old leader sees it lost');
  });

  it('release() hands the Lease over at once', async () => {
    const name = { ...lease, name: 'monitor-release' };
    const a = new LeaseElector(api, name, 'a', timing);
    const b = new LeaseElector(api, name, 'b', timing);
    assert.equal(await a.tryAcquireOrRenew(), true);
    assert.equal(await b.tryAcquireOrRenew(), false);
    await a.release();
    assert.equal(await b.tryAcquireOrRenew(), true);
  });
});
