import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultAttestationConfig, Variant } from '@asterism/attestation';
import { UsageError } from '../usage.js';
import { buildCliValidator } from './cli-validator.js';
import { CliValidatorError } from './errors.js';
import { validatorOptions } from './validator-flags.js';

const NO_GOOGLE = { HOME: '/nonexistent' };

describe('the CLI validator factory (init, verify, recover)', () => {
  for (const variant of Variant.all().map(String)) {
    it(`${variant}: builds the variant's validator (no "no validator for attestation variant")`, async () => {
      const v = await buildCliValidator(defaultAttestationConfig(variant), { env: { GOOGLE_OAUTH_ACCESS_TOKEN: 'ya29.t' } });
      try {
        assert.equal(v.validator.variant.name, variant);
      } finally {
        await v.close();
      }
    });
  }

  for (const variant of ['gcp-sev-es', 'gcp-sev-snp']) {
    it(`${variant} without Google credentials: GCP_CREDENTIALS_MISSING before any node is dialled`, async () => {
      await assert.rejects(buildCliValidator(defaultAttestationConfig(variant), { env: NO_GOOGLE }), (err: unknown) => err instanceof CliValidatorError && err.code === 'GCP_CREDENTIALS_MISSING');
    });
  }

  it('other variants need no Google credentials', async () => {
    const v = await buildCliValidator(defaultAttestationConfig('azure-trustedlaunch'), { env: NO_GOOGLE });
    await v.close();
  });

  const flagCases: Array<[string, Parameters<typeof validatorOptions>[0], RegExp | Record<string, unknown>]> = [
    ['no flags', {}, { env: {} }],
    ['all flags', { 'cloud-api-url': 'http://127.0.0.1:5000', 'collateral-dir': '/var/tmp/c', 'collateral-offline': true }, { env: {}, cloudApiUrl: 'http://127.0.0.1:5000', collateralDir: '/var/tmp/c', collateralOffline: true }],
    ['--collateral-offline without a directory', { 'collateral-offline': true }, /--collateral-offline needs --collateral-dir/],
    ['--cloud-api-url that is not an http(s) URL', { 'cloud-api-url': 'ec2.local' }, /invalid --cloud-api-url "ec2\.local"/],
  ];
  for (const [name, values, want] of flagCases) {
    it(`validator flags: ${name}`, () => {
      if (want instanceof RegExp) assert.throws(() => validatorOptions(values, {}), (err: unknown) => err instanceof UsageError && want.test(err.message));
      else assert.deepEqual(validatorOptions(values, {}), want);
    });
  }
});
