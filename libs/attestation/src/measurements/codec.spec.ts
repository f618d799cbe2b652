import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { decodeMeasurementsJson, decodeMeasurementsYaml, encodeMeasurementsJson, encodeMeasurementsYaml } from './codec.js';
import { measurementFromJsonValue, measurementToJson, withAllBytes, type Measurement } from './measurement.js';
import { Measurements } from './measurements.js';

const FD = 'fd5de9df350e3bc4410ac06bbfe5ccdeb93f53b9ef51239f752ce69dbc600f35';
const D5 = 'd5a4496d21dec9a5258ddb19c6feb53bb4d3c0463fe607f2488ddf4f1006ef9e';
const FD48 = FD + 'fd5de9df350e3bc4410ac06bbfe5ccde';
const D548 = D5 + 'fd5de9df350e3bc4410ac06bbfe5ccde';
const enforce = (hex: string): Measurement => ({ expected: Buffer.from(hex, 'hex'), validationOpt: 'Enforce' });

const isInvalid = (msg?: string | RegExp) => (e: unknown) =>
  e instanceof AttestationError && e.code === 'MEASUREMENTS_INVALID' && (msg === undefined || (typeof msg === 'string' ? e.message.includes(msg) : msg.test(e.message)));

describe('single measurement (TestMarshal)', () => {
  const cases: Array<[string, Measurement, string]> = [
    ['enforce', enforce(FD), `{"expected":"${FD}","warnOnly":false}`],
    ['warn only', { expected: Buffer.from('01020304' + '00'.repeat(28), 'hex'), validationOpt: 'WarnOnly' }, `{"expected":"01020304${'00'.repeat(28)}","warnOnly":true}`],
  ];
  for (const [name, m, json] of cases) {
    it(`${name}: JSON`, () => assert.equal(measurementToJson(m), json));
    it(`${name}: YAML`, () => {
      const yaml = encodeMeasurementsYaml(Measurements.of([[0, m]]));
      assert.equal(yaml, `0:\n    expected: "${m.expected.toString('hex')}"\n    warnOnly: ${m.validationOpt === 'WarnOnly'}\n`);
    });
    it(`${name}: decodes back`, () => assert.deepEqual(measurementFromJsonValue(JSON.parse(json)), m));
  }

  it('accepts upper-case hex and case-insensitive keys', () => {
    assert.deepEqual(measurementFromJsonValue({ EXPECTED: FD.toUpperCase(), WarnOnly: true }), { expected: Buffer.from(FD, 'hex'), validationOpt: 'WarnOnly' });
  });
});

describe('decode (TestUnmarshal)', () => {
  type Case = [name: string, json: string, yaml: string, want: Measurements | string | RegExp];
  const cases: Case[] = [
    ['valid measurements hex', `{"2":{"expected":"${FD}"},"3":{"expected":"${D5}"}}`, `2:\n expected: "${FD}"\n3:\n expected: "${D5}"`, Measurements.of({ 2: enforce(FD), 3: enforce(D5) })],
    [
      'valid measurements hex 48 bytes',
      `{"2":{"expected":"${FD48}"},"3":{"expected":"${D548}"}}`,
      `2:\n expected: "${FD48}"\n3:\n expected: "${D548}"`,
      Measurements.of({ 2: enforce(FD48), 3: enforce(D548) }),
    ],
    ['upper-case hex', `{"2":{"expected":"${FD.toUpperCase()}"}}`, `2:\n expected: "${FD.toUpperCase()}"`, Measurements.of({ 2: enforce(FD) })],
    ['all zero, unquoted in YAML', `{"2":{"expected":"${'00'.repeat(32)}","warnOnly":true}}`, `2:\n expected: ${'00'.repeat(32)}\n warnOnly: true`, Measurements.of({ 2: withAllBytes(0, 'WarnOnly') })],
    ['legacy bare string is Enforce', `{"2":"${FD}","3":"${D5}"}`, `2: "${FD}"\n3: "${D5}"`, Measurements.of({ 2: enforce(FD), 3: enforce(D5) })],
    ['empty map', '{}', '{}', new Measurements()],
    ['null is empty', 'null', '', new Measurements()],
    ['leading-zero key', `{"007":"${FD}"}`, `007: "${FD}"`, Measurements.of({ 7: enforce(FD) })],
    ['base64 rejected', `{"2":{"expected":"/V3p3zUOO8RBCsBrv+XM3rk/U7nvUSOfdSzmnbxgDzU="}}`, `2:\n expected: "/V3p3zUOO8RBCsBrv+XM3rk/U7nvUSOfdSzmnbxgDzU="`, 'decoding hex'],
    ['base64 zeros rejected', `{"2":{"expected":"AQIDBAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}}`, `2:\n expected: "AQIDBAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="`, 'decoding hex'],
    ['short base64 rejected', `{"2":{"expected":"AA=="}}`, `2:\n expected: "AA=="`, 'decoding hex'],
    ['not base64 either', `{"2":{"expected":"This is not base64"}}`, `2:\n expected: "This is not base64"`, 'decoding hex'],
    ['21-byte hex', `{"2":{"expected":"${FD.slice(0, 42)}"}}`, `2:\n expected: "${FD.slice(0, 42)}"`, 'invalid measurement: invalid length: 21'],
    ['odd-length hex', `{"2":"${FD.slice(1)}"}`, `2: "${FD.slice(1)}"`, 'odd length'],
    ['missing expected', '{"2":{"warnOnly":true}}', '2:\n warnOnly: true', 'invalid measurement: invalid length: 0'],
    ['null measurement', '{"2":null}', '2:', 'invalid measurement: invalid length: 0'],
    ['mixed 48/32', `{"2":{"expected":"${FD48}"},"3":{"expected":"${D5}"}}`, `2:\n expected: "${FD48}"\n3:\n expected: "${D5}"`, 'inconsistent measurement length: index 3: expected 48, got 32'],
    ['object as expected', '{"1":{"expected":{"someKey":12,"anotherKey":34}}}', '1:\n expected:\n  someKey: 12\n  anotherKey: 34', 'expected must be a hex string'],
    ['number as measurement', '{"1":12}', '1: [1, 2]', 'invalid measurement'],
    ['warnOnly not a bool', `{"1":{"expected":"${FD}","warnOnly":"yes"}}`, `1:\n expected: "${FD}"\n warnOnly: "yes"`, 'warnOnly must be a boolean'],
    ['YAML 1.1 booleans (plain only)', `{"1":{"expected":"${FD}","warnOnly":true}}`, `1:\n expected: "${FD}"\n warnOnly: yes`, Measurements.of({ 1: { expected: Buffer.from(FD, 'hex'), validationOpt: 'WarnOnly' } })],
    ['negative index', `{"-1":"${FD}"}`, `-1: "${FD}"`, 'invalid measurement index'],
    ['non-numeric index', `{"a":"${FD}"}`, `a: "${FD}"`, 'invalid measurement index'],
    ['index out of uint32 range', `{"4294967296":"${FD}"}`, `4294967296: "${FD}"`, 'invalid measurement index'],
    ['duplicate index', `{"1":"${FD}","01":"${FD}"}`, `1: "${FD}"\n01: "${FD}"`, /duplicate measurement index 1|keys must be unique/],
    ['array instead of map', '[]', '- a', 'expected a'],
  ];
  for (const [name, json, yaml, want] of cases) {
    for (const [format, decode, input] of [
      ['JSON', decodeMeasurementsJson, json],
      ['YAML', decodeMeasurementsYaml, yaml],
    ] as const) {
      it(`${format}: ${name}`, () => {
        if (!(want instanceof Measurements)) assert.throws(() => decode(input), isInvalid(want));
        else assert.ok(decode(input).equalTo(want), `decoded ${JSON.stringify(decode(input))}`);
      });
    }
  }

  it('carries the index in details', () => {
    assert.throws(
      () => decodeMeasurementsJson(`{"9":"abcd"}`),
      (e: unknown) => e instanceof AttestationError && e.details.index === 9 && e.details.length === 2,
    );
  });

  it('JSON syntax errors are MEASUREMENTS_INVALID', () => assert.throws(() => decodeMeasurementsJson('{"1":'), isInvalid('invalid measurements JSON')));
  it('YAML syntax errors are MEASUREMENTS_INVALID', () => assert.throws(() => decodeMeasurementsYaml('1: [\n'), isInvalid('invalid measurements YAML')));
  it('JSON accepts bytes', () => assert.equal(decodeMeasurementsJson(Buffer.from(`{"1":"${FD}"}`)).size, 1));
});

describe('encode', () => {
  it('JSON uses Go map key order (lexicographic)', () => {
    const m = new Measurements();
    for (const i of [2, 10, 0, 1, 11, 3, 20]) m.set(i, withAllBytes(i, 'Enforce'));
    const keys = Object.keys(JSON.parse(encodeMeasurementsJson(m)) as object);
    assert.ok(encodeMeasurementsJson(m).startsWith(`{"0":{"expected":"${'00'.repeat(32)}","warnOnly":false},"1":`));
    assert.deepEqual(
      [...encodeMeasurementsJson(m).matchAll(/"(\d+)":\{/g)].map((x) => x[1]),
      ['0', '1', '10', '11', '2', '20', '3'],
    );
    assert.equal(keys.length, 7);
  });

  it('JSON of an empty map', () => assert.equal(encodeMeasurementsJson(new Measurements()), '{}'));

  const yamlCases: Array<[string, Measurements, string]> = [
    [
      'basic',
      Measurements.of({ 1: withAllBytes(1, 'Enforce'), 2: withAllBytes(2, 'WarnOnly') }),
      `1:\n    expected: "${'01'.repeat(32)}"\n    warnOnly: false\n2:\n    expected: "${'02'.repeat(32)}"\n    warnOnly: true\n`,
    ],
    [
      'output is sorted',
      Measurements.of([
        [3, withAllBytes(0, 'Enforce')],
        [1, withAllBytes(0, 'Enforce')],
        [11, withAllBytes(0, 'Enforce')],
        [2, withAllBytes(0, 'Enforce')],
      ]),
      [1, 2, 3, 11].map((i) => `${i}:\n    expected: "${'00'.repeat(32)}"\n    warnOnly: false\n`).join(''),
    ],
  ];
  for (const [name, m, want] of yamlCases) {
    it(`YAML (TestEncodeM): ${name}`, () => assert.equal(encodeMeasurementsYaml(m), want));
  }

  it('round-trips through both formats', () => {
    const m = Measurements.of({ 0: withAllBytes(0xab, 'WarnOnly'), 15: withAllBytes(0, 'Enforce'), 4: { expected: Buffer.from(FD, 'hex'), validationOpt: 'Enforce' } });
    assert.ok(decodeMeasurementsJson(encodeMeasurementsJson(m)).equalTo(m));
    assert.ok(decodeMeasurementsYaml(encodeMeasurementsYaml(m)).equalTo(m));
  });
});
