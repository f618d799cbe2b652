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

describe('joinservice --identity-binding', () => {
  const base = ['--cloud-provider=qemu', '--attestation-variant=qemu-vtpm'];
  const cases: { name: string; argv: string[]; want: 'strict' | 'off' | RegExp }[] = [
    { name: 'strict by default', argv: base, want: 'strict' },
    { name: 'off restores the reference behaviour', argv: [...base, '--identity-binding=off'], want: 'off' },
    { name: 'strict explicitly', argv: [...base, '--identity-binding', 'strict'], want: 'strict' },
    { name: 'anything else is refused', argv: [...base, '--identity-binding=loose'], want: /invalid --identity-binding "loose": want strict or off/ },
  ];
  for (const c of cases) {
    it(c.name, () => {
      if (c.want instanceof RegExp) assert.throws(() => parseFlags(c.argv), c.want);
      else assert.equal(parseFlags(c.argv)!.identityBinding, c.want);
    });
  }
  it('--metadata-file is passed through', () => assert.equal(parseFlags([...base, '--metadata-file=/run/meta.json'])!.metadataFile, '/run/meta.json'));
});
