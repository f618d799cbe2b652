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

describe('joinservice cloud provider flags', () => {
  const v = '--attestation-variant=aws-nitro-tpm';
  const ok: { name: string; argv: string[]; provider: string; metadataUrl?: string; cloudApiUrl?: string }[] = [
    { name: '--cloud-provider aws', argv: ['--cloud-provider=aws', v], provider: 'AWS' },
    { name: '--csp alias, any case', argv: ['--csp=Azure', v], provider: 'Azure' },
    { name: 'both, agreeing', argv: ['--csp=gcp', '--cloud-provider=gcp', v], provider: 'GCP' },
    { name: 'endpoint overrides', argv: ['--csp=aws', '--metadata-url=http://127.0.0.1:1', '--cloud-api-url=http://127.0.0.1:2', v], provider: 'AWS', metadataUrl: 'http://127.0.0.1:1', cloudApiUrl: 'http://127.0.0.1:2' },
  ];
  for (const c of ok) {
    it(c.name, () => {
      const cfg = parseFlags(c.argv)!;
      assert.equal(cfg.cloudProvider, c.provider);
      assert.equal(cfg.metadataUrl, c.metadataUrl);
      assert.equal(cfg.cloudApiUrl, c.cloudApiUrl);
    });
  }
  const bad: { name: string; argv: string[]; error: RegExp }[] = [
    { name: 'disagreeing --csp and --cloud-provider', argv: ['--csp=aws', '--cloud-provider=gcp', v], error: /disagree/ },
    { name: 'unknown provider', argv: ['--csp=ibm', v], error: /unknown cloud provider "ibm"/ },
    { name: 'cloud API URL not http', argv: ['--csp=aws', '--cloud-api-url=ftp://x', v], error: /invalid --cloud-api-url/ },
  ];
  for (const c of bad) it(`refuses ${c.name}`, () => assert.throws(() => parseFlags(c.argv), c.error));
});
