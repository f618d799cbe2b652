import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseFlags } from './flags.js';

describe('joinservice flags', () => {
  const base = ['--cloud-provider=qemu', '--attestation-variant=qemu-tdx'];
  const cases: { name: string; argv: string[]; offline: boolean }[] = [
    { name: 'collateral online by default', argv: base, offline: false },
    { name: '--collateral-offline', argv: [...base, '--collateral-offline'], offline: true },
  ];
  for (const c of cases) it(c.name, () => assert.equal(parseFlags(c.argv)!.collateralOffline, c.offline));
});

describe('joinservice flags: cloud vTPM variants', () => {
  const cases: Array<[provider: string, variant: string, expected: string]> = [
    ['azure', 'azure-trustedlaunch', 'Azure'],
    ['aws', 'aws-nitro-tpm', 'AWS'],
    ['gcp', 'gcp-sev-es', 'GCP'],
  ];
  for (const [provider, variant, expected] of cases) {
    it(`--cloud-provider=${provider} --attestation-variant=${variant}`, () => {
      const c = parseFlags([`--cloud-provider=${provider}`, `--attestation-variant=${variant}`])!;
      assert.equal(c.variant.name, variant);
      assert.equal(c.cloudProvider, expected);
    });
  }
});
