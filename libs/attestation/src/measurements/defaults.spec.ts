import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CloudProvider } from '../variant.js';
import { applyImageOverrides as applyOverrides, defaultsFor } from '../measurement-defaults.js';
import { enterpriseQemuVtpmMeasurements } from './defaults.js';
import { AttestationError } from '../errors.js';
import { withAllBytes } from './measurement.js';
import { Measurements } from './measurements.js';

const PH32 = '1234'.repeat(16);
const PH48 = '1234'.repeat(24);
const Z32 = '00'.repeat(32);
const Z48 = '00'.repeat(48);
const view = (m: Measurements) => Object.fromEntries(m.sortedIndices().map((i) => [i, `${m.get(i)!.expected.toString('hex')}/${m.get(i)!.validationOpt}`]));
const VTPM = { 4: `${PH32}/Enforce`, 8: `${Z32}/Enforce`, 9: `${PH32}/Enforce`, 11: `${Z32}/Enforce`, 12: `${PH32}/Enforce`, 13: `${Z32}/Enforce`, 15: `${Z32}/Enforce` };

describe('defaultsFor', () => {
  const cases: Array<[CloudProvider, string, Record<number, string>]> = [
    ['AWS', 'aws-nitro-tpm', VTPM],
    ['AWS', 'aws-sev-snp', VTPM],
    ['Azure', 'azure-sev-snp', VTPM],
    ['Azure', 'azure-tdx', VTPM],
    ['Azure', 'azure-trustedlaunch', VTPM],
    ['GCP', 'gcp-sev-es', VTPM],
    ['GCP', 'gcp-sev-snp', VTPM],
    ['OpenStack', 'qemu-vtpm', VTPM],
    ['QEMU', 'qemu-vtpm', VTPM],
    ['QEMU', 'qemu-tdx', { 0: `${PH48}/Enforce`, 1: `${PH48}/Enforce`, 2: `${PH48}/Enforce`, 3: `${Z48}/Enforce`, 4: `${PH48}/Enforce` }],
    ['AWS', 'gcp-sev-es', {}],
    ['Unknown', 'dummy', {}],
    ['QEMU', 'no-such-variant', {}],
  ];
  for (const [csp, variant, want] of cases) {
    it(`${csp} + ${variant}`, () => assert.deepEqual(view(defaultsFor(csp, variant)), want));
  }

  it('returns fresh copies', () => {
    const a = defaultsFor('QEMU', 'qemu-vtpm');
    a.get(15)!.expected[0] = 1;
    a.delete(4);
    assert.equal(defaultsFor('QEMU', 'qemu-vtpm').get(15)!.expected[0], 0);
    assert.equal(defaultsFor('QEMU', 'qemu-vtpm').size, 7);
  });

  it('enterprise qemu-vtpm preset', () => {
    assert.deepEqual(view(enterpriseQemuVtpmMeasurements()), {
      4: '5198fd549fc9f44a49168b788f58e366af624866647dbe7e917388a0b1673c1d/Enforce',
      8: `${Z32}/Enforce`,
      9: '2dee5d9c597a9098821e73214b9347b8e5e448c09ebd3375143855be72e33058/Enforce',
      11: 'db794e9bc200e22550514674ca3494119b00b2db74ffe2f7c970bf6bf5bc1cae/Enforce',
      12: `${Z32}/Enforce`,
      13: `${Z32}/Enforce`,
      15: `${Z32}/Enforce`,
    });
  });
});

describe('applyOverrides', () => {
  const SEP = '3d458cfe55cc03ea1f443f1562beec8df51c75e14a9fcf9a7234a13f198e7969';
  const full = () => {
    const m = new Measurements();
    for (let i = 0; i < 24; i++) m.set(i, withAllBytes(0xee, 'Enforce'));
    return m;
  };
  const cases: Array<[string, CloudProvider, string, Record<number, string>]> = [
    ['AWS nitro', 'AWS', 'aws-nitro-tpm', { 0: '737f767a12f54e70eecbc8684011323ae2fe2dd9f90785577969d7a2013e8c12/WarnOnly', 2: `${SEP}/WarnOnly`, 3: `${SEP}/WarnOnly`, 6: `${SEP}/WarnOnly`, 14: `${Z32}/WarnOnly`, 15: `${'ee'.repeat(32)}/Enforce` }],
    ['AWS SNP', 'AWS', 'aws-sev-snp', { 0: 'd6df855358f5b10f06f0fab3f408ad26cd165a2949bad69e2cc75692529e662a/WarnOnly' }],
    ['Azure', 'Azure', 'azure-sev-snp', { 0: `${'ee'.repeat(32)}/Enforce`, 1: `${SEP}/WarnOnly`, 2: `${SEP}/WarnOnly`, 3: `${SEP}/WarnOnly`, 6: `${'ee'.repeat(32)}/Enforce`, 14: `${Z32}/WarnOnly` }],
    ['GCP', 'GCP', 'gcp-sev-es', { 1: '3695dcc55e3aa34027c27793c85c723c697d708c42d1f73bd6fa4f26608a5b24/WarnOnly', 6: `${SEP}/WarnOnly`, 14: `${Z32}/WarnOnly` }],
    ['OpenStack', 'OpenStack', 'qemu-vtpm', { 2: `${'ee'.repeat(32)}/Enforce`, 14: `${Z32}/WarnOnly` }],
    ['QEMU has none', 'QEMU', 'qemu-vtpm', { 14: `${'ee'.repeat(32)}/Enforce` }],
  ];
  for (const [name, csp, variant, want] of cases) {
    it(name, () => {
      const input = full();
      input.set(4, withAllBytes(1, 'WarnOnly'));
      const got = view(applyOverrides(input, csp, variant));
      for (const [i, v] of Object.entries(want)) assert.equal(got[Number(i)], v, `index ${i}`);
      assert.equal(got[4], csp === 'QEMU' ? `${'01'.repeat(32)}/WarnOnly` : `${'01'.repeat(32)}/Enforce`);
      assert.equal(input.get(0)!.expected[0], 0xee, 'input untouched');
    });
  }

  it('value override on a missing index adds it as Enforce (then CSP sets apply)', () => {
    const m = new Measurements();
    for (const i of [0, 4, 8, 9, 11, 12, 13, 15]) m.set(i, withAllBytes(0, 'Enforce'));
    const got = applyOverrides(m, 'OpenStack', 'qemu-vtpm');
    assert.equal(got.get(14)!.validationOpt, 'WarnOnly');
  });

  it('an enforce index missing from the input fails', () => {
    assert.throws(
      () => applyOverrides(Measurements.of({ 4: withAllBytes(0, 'Enforce') }), 'OpenStack', 'qemu-vtpm'),
      (e: unknown) => e instanceof AttestationError && e.code === 'MEASUREMENTS_INVALID' && e.message === 'missing measurement for PCR 8' && e.details.index === 8,
    );
  });
});
