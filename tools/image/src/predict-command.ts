/**
 * `image predict`: reads a node image file, predicts its PCRs and writes the published files
 * (docs/protocol/node-image.md "Measurements"): `attestation-config.json`, `measurements.json`
 * and `prediction.json` (values, events, the UKI's facts and the build records).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readImage } from './disk/image-file.js';
import { ImageError } from './errors.js';
import { attestationConfigJson, imageMeasurementsJson } from './measure/measurements-file.js';
import { predictPcrs, type Prediction } from './measure/predict.js';

/** Options of one prediction run. */
export interface PredictOptions {
  readonly image: string;
  readonly out: string;
  /** `key=value` facts of the build (kernel, Node version, ...) copied into prediction.json. */
  readonly records: readonly string[];
  /** Image version written into measurements.json (default: the first 16 hex digits of PCR 11). */
  readonly version?: string;
}

/** The JSON view of a prediction. */
export function predictionJson(p: Prediction, records: Readonly<Record<string, string>>): string {
  const pcrs = Object.fromEntries(p.pcrs.map((x) => [String(x.index), { expected: x.value.toString('hex'), warnOnly: !x.enforced, events: x.events }]));
  return `${JSON.stringify({ pcrs, uki: p.uki, records }, null, 2)}\n`;
}

function parseRecords(records: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of records) {
    const eq = r.indexOf('=');
    if (eq <= 0) throw new ImageError('IMAGE_INVALID', `--record wants key=value, got "${r}"`);
    out[r.slice(0, eq)] = r.slice(eq + 1);
  }
  return out;
}

/** Predicts and writes the three files; returns the prediction. */
export async function predictCommand(opts: PredictOptions): Promise<Prediction> {
  const records = parseRecords(opts.records);
  const { uki, gpt } = await readImage(opts.image);
  const prediction = predictPcrs(uki, gpt);
  const version = opts.version ?? `pcr11-${prediction.pcrs.find((p) => p.index === 11)!.value.toString('hex').slice(0, 16)}`;
  await writeFile(join(opts.out, 'attestation-config.json'), `${attestationConfigJson(prediction.pcrs)}\n`);
  await writeFile(join(opts.out, 'measurements.json'), `${imageMeasurementsJson(prediction.pcrs, version)}\n`);
  await writeFile(join(opts.out, 'prediction.json'), predictionJson(prediction, records));
  return prediction;
}
