/**
 * The monitor builds every variant's validator with the outside sources the variant needs, as the
 * joinservice does (libs/validator-sources), against a real kube-apiserver holding the collateral
 * ConfigMaps. Without the sources, a TDX validator cannot even be built (the contrast case shows
 * what this wiring fixes); the other variants would refuse every node at validation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defaultAttestationConfig, encodeAttestationConfig, variantDescriptors } from '@asterism/attestation';
import { startTestControlPlane, testenvUnavailable, type TestControlPlane } from '@asterism/k8s-testenv';
import { createNopLogger } from '@asterism/logger';
import { runningNodeValidator } from '@asterism/node-attestation';
import { CollateralCounts } from '@asterism/validator-sources';
import { parseFlags } from './flags.js';
import { monitorValidatorFactory } from './validator.js';

const skip = testenvUnavailable();

describe('the monitor validator of every variant, with its outside sources', { skip }, () => {
  let cp: TestControlPlane;
  before(async () => {
    cp = await startTestControlPlane();
    await cp.admin.core.createNamespace({ body: { metadata: { name: 'kube-system' } } }).catch(() => undefined);
  });
  after(async () => cp?.stop());

  for (const d of variantDescriptors()) {
    const name = d.variant.name;
    it(`${name}: builds ${d.sources.length ? d.sources.join(', ') : 'no sources'} and validates with them`, async () => {
      // Offline: no vendor service is ever contacted; the caches are read from (empty) ConfigMaps.
      const cfg = parseFlags(['--variant', name, '--collateral-offline', '--cluster-id', '00'.repeat(32)])!;
      const configJson = encodeAttestationConfig(defaultAttestationConfig(name));
      const build = await monitorValidatorFactory({ sources: cfg.sources, clients: cp.admin, logger: createNopLogger(), collateralCounts: new CollateralCounts() });
      assert.equal(build(configJson).variant.name, name);
      // TDX validators cannot even be built without their collateral source (others fail later, at validation).
      if (d.sources.includes('intel-pcs')) {
        assert.throws(() => runningNodeValidator(cfg.variant, createNopLogger())(configJson), /needs the .* source/, 'without the sources the validator cannot be built');
      }
    });
  }

  it('parses the collateral flags as the joinservice does (a bad value names the flag)', () => {
    const cfg = parseFlags(['--variant', 'qemu-tdx', '--intel-pcs-url', 'http://127.0.0.1:9/pcs/', '--tdx-accepted-tcb-statuses', 'UpToDate'])!;
    assert.equal(cfg.sources.intelPcsUrl, 'http://127.0.0.1:9/pcs');
    assert.deepEqual(cfg.sources.tdxAcceptedTcbStatuses, ['UpToDate']);
    assert.throws(() => parseFlags(['--variant', 'qemu-tdx', '--amd-kds-url', 'ftp://x']), /invalid --amd-kds-url/);
  });
});
