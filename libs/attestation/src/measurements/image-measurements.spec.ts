import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import type { CloudProvider } from '../variant.js';
import { goJsonString } from './go-json-string.js';
import { decodeImageMeasurementsV2, encodeImageMeasurementsV2, mergeImageMeasurementsV2, selectImageMeasurements, type ImageMeasurementsV2 } from './image-measurements.js';
import { withAllBytes } from './measurement.js';
import { Measurements } from './measurements.js';

const entry = (csp: CloudProvider, attestationVariant: string, b = 0) => ({ csp, attestationVariant, measurements: Measurements.of({ 0: withAllBytes(b, 'Enforce') }) });
const im = (list: ReturnType<typeof entry>[], over: Partial<ImageMeasurementsV2> = {}): ImageMeasurementsV2 => ({ version: 'v2.16.0', ref: '-', stream: 'stable', list, ...over });
const names = (x: ImageMeasurementsV2) => x.list.map((e) => `${e.csp}/${e.attestationVariant}`);
const invalid = (msg: string) => (e: unknown) => e instanceof AttestationError && e.code === 'MEASUREMENTS_INVALID' && e.message.includes(msg);

describe('mergeImageMeasurementsV2 (TestMergeImageMeasurementsV2)', () => {
  it('single input is returned unchanged', () => {
    const one = im([entry('GCP', 'gcp-sev-es'), entry('AWS', 'aws-sev-snp')]);
    assert.equal(mergeImageMeasurementsV2(one), one);
  });

  it('two inputs are merged', () => {
    const got = mergeImageMeasurementsV2(im([entry('AWS', 'aws-sev-snp')]), im([entry('GCP', 'gcp-sev-es')]));
    assert.deepEqual(names(got), ['AWS/aws-sev-snp', 'GCP/gcp-sev-es']);
    assert.equal(got.version, 'v2.16.0');
  });

  it('sorted by CSP enum order, then variant', () => {
    const got = mergeImageMeasurementsV2(
      im([entry('QEMU', 'qemu-vtpm'), entry('GCP', 'gcp-sev-snp')]),
      im([entry('Azure', 'azure-trustedlaunch'), entry('AWS', 'aws-sev-snp'), entry('Azure', 'azure-sev-snp')]),
      im([entry('OpenStack', 'qemu-vtpm'), entry('GCP', 'gcp-sev-es'), entry('AWS', 'aws-nitro-tpm')]),
    );
    assert.deepEqual(names(got), ['AWS/aws-nitro-tpm', 'AWS/aws-sev-snp', 'Azure/azure-sev-snp', 'Azure/azure-trustedlaunch', 'GCP/gcp-sev-es', 'GCP/gcp-sev-snp', 'OpenStack/qemu-vtpm', 'QEMU/qemu-vtpm']);
  });

  for (const [field, over] of [
    ['version', { version: 'v2.17.0' }],
    ['ref', { ref: 'feat-x' }],
    ['stream', { stream: 'nightly' }],
  ] as const) {
    it(`${field} mismatch fails`, () => assert.throws(() => mergeImageMeasurementsV2(im([]), im([], over)), invalid(`${field} mismatch`)));
  }

  it('no input fails', () => assert.throws(() => mergeImageMeasurementsV2(), invalid('no measurement objects specified')));
});

describe('image measurements JSON', () => {
  const json = `{"version":"v2.16.0","ref":"-","stream":"stable","list":[{"csp":"AWS","attestationVariant":"aws-sev-snp","measurements":{"0":{"expected":"${'00'.repeat(32)}","warnOnly":false}}},{"csp":"QEMU","attestationVariant":"qemu-vtpm","measurements":{"0":{"expected":"${'01'.repeat(32)}","warnOnly":false}}}]}`;

  it('round-trips byte-identically', () => assert.equal(encodeImageMeasurementsV2(decodeImageMeasurementsV2(json)), json));

  it('decodes case-insensitive keys and CSP names', () => {
    const got = decodeImageMeasurementsV2(`{"Version":"v1","LIST":[{"CSP":"azure","attestationvariant":"azure-sev-snp","Measurements":{}}]}`);
    assert.equal(got.version, 'v1');
    assert.equal(got.ref, '');
    assert.deepEqual(names(got), ['Azure/azure-sev-snp']);
  });

  const bad: Array<[string, string, string]> = [
    ['syntax', '{', 'invalid image measurements JSON'],
    ['not an object', '[]', 'document must be an object'],
    ['list not an array', '{"list":{}}', 'list must be an array'],
    ['entry not an object', '{"list":[1]}', 'list[0] must be an object'],
    ['version not a string', '{"version":2}', 'version must be a string'],
    ['bad measurement', '{"list":[{"csp":"AWS","measurements":{"0":"00"}}]}', 'list[0].measurements: index 0: invalid measurement: invalid length: 1'],
  ];
  for (const [name, input, msg] of bad) it(`rejects ${name}`, () => assert.throws(() => decodeImageMeasurementsV2(input), invalid(msg)));

  it('selects one entry', () => {
    const file = decodeImageMeasurementsV2(json);
    assert.equal(selectImageMeasurements(file, 'QEMU', 'qemu-vtpm').get(0)!.expected[0], 1);
    assert.throws(() => selectImageMeasurements(file, 'GCP', 'gcp-sev-es'), invalid('no measurements found for csp GCP, attestationVariant gcp-sev-es'));
  });
});

describe('goJsonString', () => {
  const cases: Array<[string, string]> = [
    ['plain', '"plain"'],
    ['a<b>&c', '"a\\u003cb\\u003e\\u0026c"'],
    ['line\nsep\u2028', '"line\\nsep\\u2028"'],
    ['quote"back\\', '"quote\\"back\\\\"'],
  ];
  for (const [input, want] of cases) it(JSON.stringify(input), () => assert.equal(goJsonString(input), want));
});
