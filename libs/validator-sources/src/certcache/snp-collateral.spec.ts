import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { MemoryCollateralStore, SnpCollateral, Variant, variantDescriptor } from '@asterism/attestation';
import type { KubeClients } from '@asterism/k8s';
import { createLogger } from '@asterism/logger';
import { CertCacheError, type AmdCertChain } from './cert-cache.js';
import { parseSourceFlags } from '../source-flags.js';
import { buildSource } from '../sources.js';
import { CollateralCounts, snpValidatorDependencies } from './snp-collateral.js';

const ASK = '-----BEGIN CERTIFICATE-----\nASK\n-----END CERTIFICATE-----\n';

function sources(variant: string, load: (signer: 'vcek' | 'vlek') => Promise<AmdCertChain>, offline = false) {
  const calls: string[] = [];
  return {
    calls,
    s: {
      ...(variantDescriptor(variant).amdSigner ? { signer: variantDescriptor(variant).amdSigner } : {}),
      certCache: {
        load: (signer: 'vcek' | 'vlek') => (calls.push(signer), load(signer)),
        // The ConfigMap as it is, without KDS (what load() would return when it needs no fetch).
        cached: () => (calls.push('cached'), load('vcek')),
      },
      store: new MemoryCollateralStore(),
      metrics: new CollateralCounts(),
      logger: createLogger({ component: 'test', level: 'error' }),
      offline,
    },
  };
}

/**
 * What the joinservice hands an SNP validator: the KDS part (`amd-kds`, snpValidatorDependencies)
 * plus the other sources the variant's descriptor names (`maa`, `gce-shielded-identity`).
 */
async function snpDependencies(variant: string, s: Parameters<typeof snpValidatorDependencies>[0]) {
  const kds = await snpValidatorDependencies(s);
  const w = { cfg: parseSourceFlags(Variant.fromString(variant), {}), logger: s.logger, clients: {} as KubeClients, collateralCounts: new CollateralCounts(), step: async <T>(_w: string, fn: () => Promise<T> | T) => fn() };
  const others = variantDescriptor(variant).sources.filter((k) => k !== 'amd-kds');
  let snp = kds;
  for (const kind of others) snp = { ...snp, ...(await buildSource(kind, w)).snp };
  return snp;
}

describe('snpValidatorDependencies', () => {
  const cases: Array<{ name: string; variant: string; offline?: boolean; load: () => Promise<AmdCertChain>; signers: string[]; keys: string[]; gce: boolean }> = [
    { name: 'azure-sev-snp: the cached ASK (VCEK chain) becomes a signing key', variant: 'azure-sev-snp', load: async () => ({ ask: ASK, ark: null }), signers: ['vcek'], keys: [ASK], gce: false },
    { name: 'aws-sev-snp: the cached ASVK (VLEK chain)', variant: 'aws-sev-snp', load: async () => ({ ask: ASK, ark: null }), signers: ['vlek'], keys: [ASK], gce: false },
    { name: 'gcp-sev-snp: no certificate cache, a GCE shielded-identity source', variant: 'gcp-sev-snp', load: async () => ({ ask: ASK, ark: null }), signers: [], keys: [], gce: true },
    {
      name: 'KDS unreachable with an empty cache: no signing key, no failure',
      variant: 'azure-sev-snp',
      load: () => Promise.reject(new CertCacheError('KDS_UNAVAILABLE', 'down')),
      signers: ['vcek'],
      keys: [],
      gce: false,
    },
    { name: 'offline: the ConfigMap is read without KDS, its ASVK becomes a signing key', variant: 'aws-sev-snp', offline: true, load: async () => ({ ask: ASK, ark: null }), signers: ['cached'], keys: [ASK], gce: false },
    { name: 'offline with an empty certificate cache: no signing key, no fetch', variant: 'azure-sev-snp', offline: true, load: async () => ({ ask: null, ark: null }), signers: ['cached'], keys: [], gce: false },
    { name: 'offline gcp-sev-snp: no certificate cache at all', variant: 'gcp-sev-snp', offline: true, load: async () => ({ ask: ASK, ark: null }), signers: [], keys: [], gce: true },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { s, calls } = sources(c.variant, c.load, c.offline);
      const deps = await snpDependencies(c.variant, s);
      assert.ok(deps.collateral instanceof SnpCollateral);
      deps.collateral.close();
      assert.deepEqual(calls, c.signers);
      assert.deepEqual(deps.cachedSigningKeys, c.keys);
      assert.equal(deps.gceIdentity !== undefined, c.gce);
      assert.equal(deps.maa !== undefined, c.variant === 'azure-sev-snp');
    });
  }

  it('a Kubernetes failure of the certificate cache still fails start-up', async () => {
    const { s } = sources('azure-sev-snp', () => Promise.reject(new CertCacheError('K8S_UNAVAILABLE', 'apiserver down')));
    await assert.rejects(snpValidatorDependencies(s), (e: unknown) => e instanceof CertCacheError && e.code === 'K8S_UNAVAILABLE');
  });

  it('early refusal warnings: counted every time, logged once per finding', async () => {
    const lines: string[] = [];
    const { s } = sources('gcp-sev-snp', async () => ({ ask: null, ark: null }));
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger({ component: 'test', level: 'warn', stream });
    const counts = new CollateralCounts();
    const upcomingMinimumTcb = { tcb: { bootloader: 4, tee: 0, snp: 22, microcode: 213 }, effectiveAt: new Date('2027-03-01T00:00:00Z') };
    const deps = await snpValidatorDependencies({ ...s, logger, metrics: counts, warnWithinDays: 14, upcomingMinimumTcb });
    deps.collateral!.close();
    assert.equal(deps.warnings?.withinDays, 14);
    assert.deepEqual(deps.warnings?.upcomingMinimumTcb, upcomingMinimumTcb);
    const risk = { kind: 'certificate-expiry' as const, subject: 'VCEK', refusedAt: new Date(), daysLeft: 3, message: 'VCEK SEV-VCEK expires soon', details: {} };
    deps.warnings!.sink(risk);
    deps.warnings!.sink(risk);
    assert.equal(counts.risks.get('certificate-expiry\u0000VCEK'), 2);
    assert.equal(lines.filter((l) => l.includes('SEV-SNP node will be refused soon: VCEK SEV-VCEK expires soon')).length, 1);
  });
});
