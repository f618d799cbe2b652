import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CachedTdxCollateralSource, CollateralCache, DcapVerifier, encodePcsRecord } from '@asterism/attestation';
import { tdxVector, VECTOR_TIME, vectorCollateral } from '@asterism/attestation/testing';
import { ConfigMapStore } from '@asterism/k8s';
import { startTestControlPlane, testenvUnavailable, type TestControlPlane } from '@asterism/k8s-testenv';
import { collateralConfigMapName, ConfigMapCollateralStore } from './collateral-store.js';

const skip = testenvUnavailable();

describe('ConfigMapCollateralStore on a real kube-apiserver', { skip }, () => {
  let cp: TestControlPlane;
  before(async () => (cp = await startTestControlPlane()));
  after(async () => cp?.stop());

  it('persists TDX collateral; an offline cache of a second replica serves the real quote from the ConfigMap', async () => {
    const v = vectorCollateral();
    const store = new ConfigMapCollateralStore(new ConfigMapStore(cp.admin.core));
    const records: [string, Buffer, string][] = [
      ['tcb/50806f000000', Buffer.from(v.tcbInfo), v.tcbInfoIssuerChain],
      ['qe-identity', Buffer.from(v.qeIdentity), v.qeIdentityIssuerChain],
      ['pck-crl/platform', Buffer.from(v.pckCrl), v.pckCrlIssuerChain],
      ['root-crl', Buffer.from(v.rootCrl), ''],
    ];
    // Two writers at once (two replicas): creation races resolve to updates, nothing is lost.
    await Promise.all(records.map(([key, body, issuerChain]) => store.put('tdx-pcs', { key, payload: encodePcsRecord({ body, issuerChain }), fetchedAt: 1 })));
    await store.put('tdx-pcs', { key: 'root-crl', payload: encodePcsRecord({ body: Buffer.from(v.rootCrl), issuerChain: '' }), fetchedAt: 2 });
    const listed = await store.list('tdx-pcs');
    assert.deepEqual(listed.map((r) => r.key).sort(), ['pck-crl/platform', 'qe-identity', 'root-crl', 'tcb/50806f000000']);
    assert.equal(listed.find((r) => r.key === 'root-crl')!.fetchedAt, 2);

    const cache = new CollateralCache({ name: 'tdx-pcs', store, offline: true, now: () => VECTOR_TIME.getTime() });
    assert.equal(await cache.load(), 4);
    const collateral = await new CachedTdxCollateralSource(cache).collateral({ fmspc: '50806f000000', ca: 'platform' });
    new DcapVerifier().authenticate(tdxVector('quote-v4-spr.dat'), collateral, VECTOR_TIME);
    cache.close();
    assert.deepEqual(await store.list('other-cache'), []);
    assert.equal(collateralConfigMapName('tdx-pcs'), 'asterism-collateral-tdx-pcs');
  });
});
