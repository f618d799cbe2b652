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

describe('joinservice --amd-kds-url', () => {
  const base = ['--cloud-provider=azure', '--attestation-variant=azure-sev-snp'];
  const cases: { name: string; argv: string[]; url?: string; error?: RegExp }[] = [
    { name: 'unset: AMD KDS', argv: base, url: undefined },
    { name: 'a mirror (trailing slash dropped)', argv: [...base, '--amd-kds-url=http://127.0.0.1:8080/'], url: 'http://127.0.0.1:8080' },
    { name: 'not a URL', argv: [...base, '--amd-kds-url=kds.example'], error: /invalid --amd-kds-url "kds.example"/ },
  ];
  for (const c of cases) {
    it(c.name, () => {
      if (c.error) assert.throws(() => parseFlags(c.argv), c.error);
      else assert.equal(parseFlags(c.argv)!.amdKdsUrl, c.url);
    });
  }
});
