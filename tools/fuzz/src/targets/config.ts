/**
 * Configuration targets: the attestation config of every variant (with the measurements and
 * certificates it carries) up to a constructed validator, and the measurement codecs (JSON, YAML,
 * the image measurements file).
 */
import { defaultAttestationConfig, encodeAttestationConfig, validatorFromConfigJson, variantDescriptor, Variant } from '@asterism/attestation';
import { decodeImageMeasurementsV2, decodeMeasurementsJson, decodeMeasurementsYaml, encodeMeasurementsJson, encodeMeasurementsYaml } from '@asterism/attestation/parsers';
import { NOT_REACHED, type FuzzTarget } from '../gate.js';

/** The config targets. */
export function configTargets(): FuzzTarget[] {
  const variants = Variant.all().map(String);
  // The SNP configs carry the real AMD root (ARK-Milan, as in testdata/amd/milan-ark.pem).
  const configs = variants.map((v) => ({ v, json: encodeAttestationConfig(defaultAttestationConfig(v)) }));
  const measurements = configs.map(({ v }) => ({ v, m: defaultAttestationConfig(v).measurements }));
  const image = JSON.stringify({
    version: 'v2.99.0',
    ref: 'main',
    stream: 'stable',
    list: measurements.map(({ v, m }) => ({ csp: variantDescriptor(v).csp.toLowerCase(), attestationVariant: v, measurements: JSON.parse(encodeMeasurementsJson(m)) })),
  });
  return [
    {
      name: 'attestation.config',
      parser: 'validatorFromConfigJson = unmarshalAttestationConfig + validatorFor (libs/attestation/src/config, choose.ts)',
      // {"variant", "config"}: the wrapper lets the JSON mutator reach into the config's values.
      seeds: configs.map(({ v, json }) => ({ name: `default ${v} config`, bytes: Buffer.from(`{"variant":${JSON.stringify(v)},"config":${json}}`) })),
      runs: 3000,
      shape: { json: true },
      run: (b) => {
        let wrapper: { variant?: unknown; config?: unknown };
        try {
          wrapper = JSON.parse(b.toString('utf8')) as typeof wrapper;
        } catch {
          return NOT_REACHED;
        }
        return validatorFromConfigJson(JSON.stringify(wrapper?.config ?? null) ?? '', String(wrapper?.variant));
      },
    },
    {
      name: 'measurements.json',
      parser: 'decodeMeasurementsJson (libs/attestation/src/measurements/codec.ts)',
      seeds: measurements.map(({ v, m }) => ({ name: `${v} measurements`, bytes: Buffer.from(encodeMeasurementsJson(m)) })),
      runs: 1500,
      shape: { json: true },
      run: (b) => decodeMeasurementsJson(b),
    },
    {
      name: 'measurements.yaml',
      parser: 'decodeMeasurementsYaml (libs/attestation/src/measurements/codec.ts)',
      seeds: measurements.map(({ v, m }) => ({ name: `${v} measurements`, bytes: Buffer.from(encodeMeasurementsYaml(m)) })),
      runs: 600,
      run: (b) => decodeMeasurementsYaml(b.toString('utf8')),
    },
    {
      name: 'measurements.image',
      parser: 'decodeImageMeasurementsV2 (libs/attestation/src/measurements/image-measurements.ts)',
      seeds: [{ name: 'image measurements of every variant', bytes: Buffer.from(image) }],
      runs: 1000,
      shape: { json: true },
      run: (b) => decodeImageMeasurementsV2(b),
    },
  ];
}
