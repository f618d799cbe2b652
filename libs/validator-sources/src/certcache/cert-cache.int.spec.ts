/**
 * The SEV-SNP certificate cache (`kube-system/sev-snp-cert-cache`) on a real kube-apiserver:
 * offline, the joinservice reads the ASK/ASVK operators or an earlier online run put there and
 * hands it to the validators, without contacting KDS and without creating or changing the
 * ConfigMap; online, an empty cache is filled from KDS.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { MemoryCollateralStore } from '@asterism/attestation';
import { ConfigMapStore } from '@asterism/k8s';
import { startTestControlPlane, testenvUnavailable, type TestControlPlane } from '@asterism/k8s-testenv';
import { createLogger } from '@asterism/logger';
import { CERT_CACHE_CONFIGMAP, CERT_CACHE_NAMESPACE, CertCache, type KdsChainSource } from './cert-cache.js';
import { CollateralCounts, snpValidatorDependencies } from './snp-collateral.js';

const skip = testenvUnavailable();
const testdata = (p: string) => readFileSync(new URL(`../../../../testdata/${p}`, import.meta.url), 'utf8');

describe('sev-snp-cert-cache on a real kube-apiserver', { skip }, () => {
  let cp: TestControlPlane;
  let store: ConfigMapStore;
  before(async () => {
    cp = await startTestControlPlane();
    store = new ConfigMapStore(cp.admin.core);
  });
  after(async () => cp?.stop());

  const logger = createLogger({ component: 'test', level: 'error' });
  const kdsCalls: string[] = [];
  const kds: KdsChainSource = { certChain: async (signer) => (kdsCalls.push(signer), testdata('snp/certchain.pem')) };
  const deps = (offline: boolean) =>
    snpValidatorDependencies({
      signer: 'vcek',
      certCache: new CertCache(store, kds, logger),
      store: new MemoryCollateralStore(),
      metrics: new CollateralCounts(),
      logger,
      offline,
    });
  const configMap = () => store.get(CERT_CACHE_NAMESPACE, CERT_CACHE_CONFIGMAP);

  it('offline without the ConfigMap: no signing key, no KDS request, nothing created', async () => {
    const d = await deps(true);
    d.collateral?.close();
    assert.deepEqual(d.cachedSigningKeys, []);
    assert.deepEqual(kdsCalls, []);
    assert.equal(await configMap(), null);
  });

  it('offline with the ConfigMap an operator created: its ASK is a signing key, read without KDS and left unchanged', async () => {
    const ask = testdata('amd/milan-ask.pem');
    await store.create(CERT_CACHE_NAMESPACE, CERT_CACHE_CONFIGMAP, { ask, ark: '' });
    const d = await deps(true);
    d.collateral?.close();
    assert.equal(d.cachedSigningKeys?.length, 1);
    assert.equal(d.cachedSigningKeys![0]!.trim(), ask.trim());
    assert.deepEqual(kdsCalls, []);
    assert.deepEqual((await configMap())?.data, { ask, ark: '' }, 'the missing ARK is not filled in offline');
  });

  it('online, the same cache gets its missing ARK from KDS (the contrast: offline never fetches)', async () => {
    const d = await deps(false);
    d.collateral?.close();
    assert.deepEqual(kdsCalls, ['vcek']);
    assert.match((await configMap())?.data?.ark ?? '', /BEGIN CERTIFICATE/);
  });
});
