import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlagError, parseFlags, USAGE } from './flags.js';

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

describe('joinservice TDX collateral and policy flags', () => {
  const base = ['--cloud-provider=qemu', '--attestation-variant=qemu-tdx'];
  const cases: { name: string; argv: string[]; want?: { intelPcsUrl?: string; intelRootCrlUrl?: string; tdxAcceptedTcbStatuses?: string[] }; error?: RegExp }[] = [
    { name: 'unset: Intel PCS, Intel root CRL, the default status set', argv: base, want: {} },
    {
      name: 'a PCS mirror and root CRL (trailing slash dropped)',
      argv: [...base, '--intel-pcs-url=http://127.0.0.1:8081/pcs/', '--intel-root-crl-url=http://127.0.0.1:8081/root.der'],
      want: { intelPcsUrl: 'http://127.0.0.1:8081/pcs', intelRootCrlUrl: 'http://127.0.0.1:8081/root.der' },
    },
    { name: 'accepted statuses (any case)', argv: [...base, '--tdx-accepted-tcb-statuses=UpToDate,outofdate'], want: { tdxAcceptedTcbStatuses: ['UpToDate', 'OutOfDate'] } },
    { name: 'PCS URL not http', argv: [...base, '--intel-pcs-url=pcs.example'], error: /invalid --intel-pcs-url "pcs.example": want an http\(s\) URL/ },
    { name: 'an unknown status', argv: [...base, '--tdx-accepted-tcb-statuses=UpToDate,Okay'], error: /invalid --tdx-accepted-tcb-statuses: unknown TDX TCB status "Okay"/ },
    { name: 'Revoked', argv: [...base, '--tdx-accepted-tcb-statuses=UpToDate,Revoked'], error: /invalid --tdx-accepted-tcb-statuses: .*Revoked cannot be accepted/ },
    { name: 'a list without UpToDate', argv: [...base, '--tdx-accepted-tcb-statuses=OutOfDate'], error: /must include UpToDate/ },
  ];
  for (const c of cases) {
    it(c.error ? `refuses ${c.name}` : c.name, () => {
      if (c.error) return assert.throws(() => parseFlags(c.argv), (e: unknown) => e instanceof FlagError && c.error!.test(e.message));
      const cfg = parseFlags(c.argv)!;
      assert.deepEqual({ intelPcsUrl: cfg.intelPcsUrl, intelRootCrlUrl: cfg.intelRootCrlUrl, tdxAcceptedTcbStatuses: cfg.tdxAcceptedTcbStatuses }, {
        intelPcsUrl: c.want!.intelPcsUrl,
        intelRootCrlUrl: c.want!.intelRootCrlUrl,
        tdxAcceptedTcbStatuses: c.want!.tdxAcceptedTcbStatuses,
      });
    });
  }

  it('--help lists each collateral flag once', () => {
    for (const flag of ['--collateral-offline', '--amd-kds-url', '--intel-pcs-url', '--intel-root-crl-url', '--tdx-accepted-tcb-statuses']) {
      assert.equal(USAGE.split(/\s+/).filter((w) => w === flag).length, 1, flag);
    }
  });
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

describe('joinservice --snp-upcoming-minimum-tcb', () => {
  const base = ['--cloud-provider=azure', '--attestation-variant=azure-sev-snp'];
  it('unset by default', () => assert.equal(parseFlags(base)!.snpUpcomingMinimumTcb, undefined));
  it('bl.tee.snp.ucode@date: the TCB and midnight UTC of that date', () => {
    assert.deepEqual(parseFlags([...base, '--snp-upcoming-minimum-tcb=4.0.22.213@2027-03-01'])!.snpUpcomingMinimumTcb, {
      tcb: { bootloader: 4, tee: 0, snp: 22, microcode: 213 },
      effectiveAt: new Date('2027-03-01T00:00:00Z'),
    });
  });
  for (const bad of ['4.0.22@2027-03-01', '4.0.22.256@2027-03-01', '4.0.22.213@2027-02-30', '4.0.22.213', 'x.0.22.213@2027-03-01']) {
    it(`refuses ${bad}`, () => assert.throws(() => parseFlags([...base, `--snp-upcoming-minimum-tcb=${bad}`]), /invalid --snp-upcoming-minimum-tcb/));
  }
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
