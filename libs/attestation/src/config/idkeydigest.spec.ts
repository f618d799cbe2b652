import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { FieldReader } from './fields.js';
import { decodeEnforcementPolicy, decodeFirmwareSignerConfig, decodeKeyDigests, encodeFirmwareSignerConfig } from './idkeydigest.js';

const r = new FieldReader('azure-sev-snp');
const D1 = 'ab'.repeat(48);
const D2 = '0356215882a825279a85b300b0b742931d113bf7e32dde2e50ffde7ec743ca491ecdd7f336dc28a6e0b2bb57af7a44a3';
const invalid = (msg: string) => (e: unknown) => e instanceof AttestationError && e.code === 'CONFIG_INVALID' && e.message.includes(msg);

describe('enforcement policy', () => {
  const ok: Array<[unknown, string]> = [
    ['Equal', 'Equal'],
    ['equal', 'Equal'],
    ['MAAFallback', 'MAAFallback'],
    ['maaFallback', 'MAAFallback'],
    ['MAAFALLBACK', 'MAAFallback'],
    ['WarnOnly', 'WarnOnly'],
    ['warnonly', 'WarnOnly'],
    [true, 'Equal'],
    [false, 'WarnOnly'],
  ];
  for (const [input, want] of ok) it(`${JSON.stringify(input)} -> ${want}`, () => assert.equal(decodeEnforcementPolicy(r, input, 'p'), want));
  for (const bad of ['StrictChecking', 'unknown', '', 1, null, {}]) {
    it(`rejects ${JSON.stringify(bad)}`, () => assert.throws(() => decodeEnforcementPolicy(r, bad, 'p'), invalid('field p')));
  }
});

describe('accepted key digests', () => {
  const ok: Array<[string, unknown, string[]]> = [
    ['list', [D1, D2], [D1, D2]],
    ['upper case', [D2.toUpperCase()], [D2]],
    ['legacy single string', D2, [D2]],
    ['empty list', [], []],
    ['null', null, []],
  ];
  for (const [name, input, want] of ok) {
    it(name, () =>
      assert.deepEqual(
        decodeKeyDigests(r, input, 'd').map((b) => b.toString('hex')),
        want,
      ),
    );
  }
  const bad: Array<[string, unknown, string]> = [
    ['short digest', ['0102'], 'field d[0]: invalid digest length: 4'],
    ['long legacy string', D2 + '00', 'field d: invalid digest length: 98'],
    ['non-hex', ['zz'.repeat(48)], 'decoding digest'],
    ['number element', [1], 'expected a hex string'],
    ['object', {}, 'expected an array'],
  ];
  for (const [name, input, msg] of bad) it(`rejects ${name}`, () => assert.throws(() => decodeKeyDigests(r, input, 'd'), invalid(msg)));
});

describe('firmwareSignerConfig', () => {
  it('decodes with case-insensitive keys', () => {
    const c = decodeFirmwareSignerConfig(r, { AcceptedKeyDigests: [D2], ENFORCEMENTPOLICY: 'maafallback', maaurl: 'https://maa.example' }, 'f');
    assert.equal(c.enforcementPolicy, 'MAAFallback');
    assert.equal(c.maaURL, 'https://maa.example');
    assert.equal(c.acceptedKeyDigests.length, 1);
  });

  it('requires the enforcement policy', () => {
    assert.throws(() => decodeFirmwareSignerConfig(r, { acceptedKeyDigests: [] }, 'f'), invalid('field f.enforcementPolicy: missing'));
    assert.throws(() => decodeFirmwareSignerConfig(r, { enforcementPolicy: null }, 'f'), invalid('field f.enforcementPolicy: must not be null'));
  });

  it('encodes without length checks and omits an empty maaURL', () => {
    const str = (s: string) => JSON.stringify(s);
    assert.equal(
      encodeFirmwareSignerConfig({ acceptedKeyDigests: [Buffer.from([1, 2, 3, 4]), Buffer.from([255, 255, 255, 255])], enforcementPolicy: 'Equal', maaURL: '' }, str),
      '{"acceptedKeyDigests":["01020304","ffffffff"],"enforcementPolicy":"Equal"}',
    );
    assert.equal(encodeFirmwareSignerConfig({ acceptedKeyDigests: [], enforcementPolicy: 'WarnOnly', maaURL: 'u' }, str), '{"acceptedKeyDigests":[],"enforcementPolicy":"WarnOnly","maaURL":"u"}');
  });
});
