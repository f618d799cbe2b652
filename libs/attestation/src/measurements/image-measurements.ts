/**
 * The published image-measurements file `measurements.json` (the reference's
 * `ImageMeasurementsV2`, docs/protocol/measurements.md): one entry per (CSP, variant) of an OS image version.
 */
import { CLOUD_PROVIDERS, cloudProviderFromString, type CloudProvider } from '../variant.js';
import { encodeMeasurementsJson, measurementsFromJsonValue } from './codec.js';
import { goField } from '../go-json.js';
import { goJsonString } from './go-json-string.js';
import { jsonType, measurementsError } from './measurement.js';
import { Measurements } from './measurements.js';

/** Measurements of one image for one CSP and attestation variant. */
export interface ImageMeasurementsV2Entry {
  readonly csp: CloudProvider;
  /** Kept as written (not validated), like the reference. */
  readonly attestationVariant: string;
  readonly measurements: Measurements;
}

/** All entries of one image version. */
export interface ImageMeasurementsV2 {
  readonly version: string;
  readonly ref: string;
  readonly stream: string;
  readonly list: readonly ImageMeasurementsV2Entry[];
}

function stringField(obj: Record<string, unknown>, name: string, where: string): string {
  const v = goField(obj, name) ?? '';
  if (typeof v !== 'string') throw measurementsError(`invalid image measurements: ${where}${name} must be a string, got ${jsonType(v)}`, { field: `${where}${name}` });
  return v;
}

function asObject(v: unknown, where: string): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw measurementsError(`invalid image measurements: ${where || 'document'} must be an object, got ${jsonType(v)}`, { field: where || 'document' });
  }
  return v as Record<string, unknown>;
}

/** Parses `measurements.json`. CSP names match case-insensitively; unknown ones become `Unknown`. */
export function decodeImageMeasurementsV2(data: string | Uint8Array): ImageMeasurementsV2 {
  let value: unknown;
  try {
    value = JSON.parse(typeof data === 'string' ? data : Buffer.from(data).toString('utf8'));
  } catch (err) {
    throw measurementsError(`invalid image measurements JSON: ${(err as Error).message}`, { reason: 'syntax' }, err);
  }
  const obj = asObject(value, '');
  const rawList = goField(obj, 'list') ?? [];
  if (!Array.isArray(rawList)) throw measurementsError(`invalid image measurements: list must be an array, got ${jsonType(rawList)}`, { field: 'list' });
  const list = rawList.map((raw, i): ImageMeasurementsV2Entry => {
    const where = `list[${i}].`;
    const entry = asObject(raw, `list[${i}]`);
    let measurements: Measurements;
    try {
      measurements = measurementsFromJsonValue(goField(entry, 'measurements') ?? null);
    } catch (err) {
      throw measurementsError(`invalid image measurements: ${where}measurements: ${(err as Error).message}`, { field: `${where}measurements` }, err);
    }
    return { csp: cloudProviderFromString(stringField(entry, 'csp', where)), attestationVariant: stringField(entry, 'attestationVariant', where), measurements };
  });
  return { version: stringField(obj, 'version', ''), ref: stringField(obj, 'ref', ''), stream: stringField(obj, 'stream', ''), list };
}

/** Go JSON of the file: `{"version","ref","stream","list":[{"csp","attestationVariant","measurements"}]}`. */
export function encodeImageMeasurementsV2(im: ImageMeasurementsV2): string {
  const entries = im.list.map(
    (e) => `{"csp":${goJsonString(e.csp)},"attestationVariant":${goJsonString(e.attestationVariant)},"measurements":${encodeMeasurementsJson(e.measurements)}}`,
  );
  return `{"version":${goJsonString(im.version)},"ref":${goJsonString(im.ref)},"stream":${goJsonString(im.stream)},"list":[${entries.join(',')}]}`;
}

/**
 * Combines the files of several CSP builds of one image: version, ref and stream must be
 * identical; the entries are concatenated and stably sorted by CSP (enum order Unknown, AWS,
 * Azure, GCP, OpenStack, QEMU) then variant name. A single input is returned unchanged.
 */
export function mergeImageMeasurementsV2(...inputs: ImageMeasurementsV2[]): ImageMeasurementsV2 {
  const [first] = inputs;
  if (!first) throw measurementsError('no measurement objects specified', { reason: 'empty' });
  if (inputs.length === 1) return first;
  const list: ImageMeasurementsV2Entry[] = [];
  for (const im of inputs) {
    for (const key of ['version', 'ref', 'stream'] as const) {
      if (im[key] !== first[key]) throw measurementsError(`${key} mismatch`, { field: key, expected: first[key], actual: im[key] });
    }
    list.push(...im.list);
  }
  const rank = (c: CloudProvider) => CLOUD_PROVIDERS.indexOf(c);
  list.sort((a, b) => rank(a.csp) - rank(b.csp) || (a.attestationVariant < b.attestationVariant ? -1 : a.attestationVariant > b.attestationVariant ? 1 : 0));
  return { version: first.version, ref: first.ref, stream: first.stream, list };
}

/** The measurements for one CSP + variant, or MEASUREMENTS_INVALID when the file has none. */
export function selectImageMeasurements(im: ImageMeasurementsV2, csp: CloudProvider, variant: string): Measurements {
  const hit = im.list.find((e) => e.csp === csp && e.attestationVariant === variant);
  if (!hit) {
    throw measurementsError(`invalid measurement metadata: no measurements found for csp ${csp}, attestationVariant ${variant} and image ${im.ref}/${im.stream}/${im.version}`, {
      csp,
      variant,
      reason: 'not found',
    });
  }
  return hit.measurements.copy();
}
