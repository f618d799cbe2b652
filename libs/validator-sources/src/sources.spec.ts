import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { registerVariant, validatorFromConfigJson, Variant } from '@asterism/attestation';
import { secondDummyVariant } from '@asterism/attestation/testing';
import type { KubeClients } from '@asterism/k8s';
import { createNopLogger } from '@asterism/logger';
import { CollateralCounts } from './certcache/snp-collateral.js';
import { parseSourceFlags } from './source-flags.js';
import { validatorDependencies, type SourceWiring } from './sources.js';

/** Wiring for the sources that need no cluster (the Kubernetes clients are never touched by them). */
const wiring = (variant: string): SourceWiring => ({
  cfg: parseSourceFlags(Variant.fromString(variant), {}),
  logger: createNopLogger(),
  clients: {} as KubeClients,
  collateralCounts: new CollateralCounts(),
  step: async (_what, fn) => fn(),
});

describe('validator sources', () => {
  const cases: Array<[variant: string, slots: string[]]> = [
    ['qemu-vtpm', []],
    ['dummy', []],
    ['azure-trustedlaunch', ['azureTrustedLaunch']],
    ['aws-nitro-tpm', ['awsNitroTpm']],
  ];
  for (const [variant, slots] of cases) {
    it(`${variant}: builds exactly the sources its descriptor names (${slots.join(', ') || 'none'})`, async () => {
      assert.deepEqual(Object.keys(await validatorDependencies(wiring(variant))).sort(), slots);
    });
  }

  describe('with a variant registered in the table (second-dummy, test-only)', () => {
    let unregister: () => void;
    before(() => {
      unregister = registerVariant(secondDummyVariant);
    });
    after(() => unregister());

    it('accepts --attestation-variant, builds the source it names and its validator', async () => {
      const w = wiring('second-dummy');
      assert.equal(w.cfg.variant.oid, '1.3.9900.99.1');
      const deps = await validatorDependencies(w);
      assert.equal(typeof deps.azureTrustedLaunch?.fetchCertificate, 'function');
      assert.equal(validatorFromConfigJson('{}', w.cfg.variant, undefined, deps).variant.name, 'second-dummy');
    });
  });
});
