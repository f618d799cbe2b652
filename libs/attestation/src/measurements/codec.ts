/**
 * JSON and YAML forms of `Measurements` (docs/protocol/measurements.md). JSON follows Go's
 * encoding/json: keys are decimal strings sorted lexicographically ("0","1","10",...,"2"). YAML
 * follows the reference's encoder: integer keys sorted numerically, 4-space indent, quoted hex.
 */
import { isMap, isScalar, parseDocument, type Node as YamlNode } from 'yaml';
import { type Measurement, jsonType, measurementFromHex, measurementFromJsonValue, measurementsError, measurementToJson } from './measurement.js';
import { Measurements } from './measurements.js';

const MAX_INDEX = 0xffffffff;

/** Parses Go JSON of `M`. Any problem is a MEASUREMENTS_INVALID AttestationError. */
export function decodeMeasurementsJson(data: string | Uint8Array): Measurements {
  let value: unknown;
  try {
    value = JSON.parse(typeof data === 'string' ? data : Buffer.from(data).toString('utf8'));
  } catch (err) {
    throw measurementsError(`invalid measurements JSON: ${(err as Error).message}`, { reason: 'syntax' }, err);
  }
  return measurementsFromJsonValue(value);
}

/**
 * Decodes an already parsed JSON value (e.g. the `measurements` member of an attestation config).
 * `null` is an empty map, as in Go.
 */
export function measurementsFromJsonValue(value: unknown): Measurements {
  if (value === null) return new Measurements();
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw measurementsError(`invalid measurements: expected an object keyed by index, got ${jsonType(value)}`, { reason: 'type' });
  }
  const out = new Measurements();
  for (const [key, raw] of Object.entries(value as Record<string, unknown>)) {
    // Go's ParseUint(key, 10, 32): decimal digits only (leading zeros allowed), uint32 range.
    const index = /^[0-9]+$/.test(key) ? Number(key) : NaN;
    if (!(index <= MAX_INDEX)) throw measurementsError(`invalid measurement index ${JSON.stringify(key)}`, { index: key, reason: 'index' });
    if (out.has(index)) throw measurementsError(`duplicate measurement index ${index}`, { index, reason: 'duplicate' });
    out.set(index, measurementFromJsonValue(raw, index));
  }
  checkConsistentLength(out);
  return out;
}

/** Go JSON of `M`: `{"<index>":{"expected":"<hex>","warnOnly":<bool>},...}` in Go's key order. */
export function encodeMeasurementsJson(m: ReadonlyMap<number, Measurement>): string {
  const keys = [...m.keys()].map(String).sort();
  return `{${keys.map((k) => `"${k}":${measurementToJson(m.get(Number(k))!)}`).join(',')}}`;
}

/** Parses the YAML form (integer keys; object or legacy bare-string values). */
export function decodeMeasurementsYaml(text: string): Measurements {
  const doc = parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw measurementsError(`invalid measurements YAML: ${doc.errors[0]!.message.split('\n')[0]}`, { reason: 'syntax' });
  }
  return measurementsFromYamlNode(doc.contents);
}

/** Decodes a YAML node holding an `M` (exported for documents that embed measurements). */
export function measurementsFromYamlNode(node: unknown): Measurements {
  const out = new Measurements();
  if (node === null || node === undefined || (isScalar(node) && node.value === null)) return out;
  if (!isMap(node)) throw measurementsError('invalid measurements: expected a mapping keyed by index', { reason: 'type' });
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? pair.key.value : undefined;
    if (typeof key !== 'number' || !Number.isInteger(key) || key < 0 || key > MAX_INDEX) {
      const shown = isScalar(pair.key) ? String(pair.key.source ?? pair.key.value) : 'non-scalar key';
      throw measurementsError(`invalid measurement index ${JSON.stringify(shown)}`, { index: shown, reason: 'index' });
    }
    if (out.has(key)) throw measurementsError(`duplicate measurement index ${key}`, { index: key, reason: 'duplicate' });
    out.set(key, measurementFromYaml(pair.value as YamlNode | null, key));
  }
  checkConsistentLength(out);
  return out;
}

/**
 * YAML measurement: a mapping with `expected`/`warnOnly` (exact key names, as yaml.v3 matches
 * them) or a legacy scalar. Scalars are taken from their source text, so unquoted all-digit hex
 * such as `0000...` keeps its digits instead of becoming the number 0.
 */
function measurementFromYaml(node: YamlNode | null, index: number): Measurement {
  if (node === null || (isScalar(node) && node.value === null)) return measurementFromHex('', 'Enforce', index);
  if (isScalar(node)) return measurementFromHex(scalarText(node, index, 'value'), 'Enforce', index);
  if (!isMap(node)) throw measurementsError('invalid measurement: expected a mapping or a hex string', { index, reason: 'type' });
  let expected = '';
  let warnOnly = false;
  for (const pair of node.items) {
    const k = isScalar(pair.key) ? pair.key.value : undefined;
    const v = pair.value as YamlNode | null;
    if (k === 'expected') {
      if (v !== null && !isScalar(v)) throw measurementsError('invalid measurement: expected must be a hex string', { index, reason: 'type', field: 'expected' });
      expected = v === null || v.value === null ? '' : scalarText(v, index, 'expected');
    } else if (k === 'warnOnly') {
      const b = isScalar(v) ? yamlBool(v) : undefined;
      if (b === undefined) throw measurementsError('invalid measurement: warnOnly must be a boolean', { index, reason: 'type', field: 'warnOnly' });
      warnOnly = b;
    }
  }
  return measurementFromHex(expected, warnOnly ? 'WarnOnly' : 'Enforce', index);
}

/** A YAML boolean; like yaml.v3 decoding into a bool, plain YAML 1.1 words (yes/no/on/off/y/n) count. */
function yamlBool(node: { value: unknown; type?: string }): boolean | undefined {
  if (typeof node.value === 'boolean') return node.value;
  if (typeof node.value !== 'string' || node.type !== 'PLAIN') return undefined;
  if (/^(y|Y|yes|Yes|YES|on|On|ON)$/.test(node.value)) return true;
  if (/^(n|N|no|No|NO|off|Off|OFF)$/.test(node.value)) return false;
  return undefined;
}

function scalarText(node: { value: unknown; source?: string }, index: number, field: string): string {
  if (typeof node.value === 'string') return node.value;
  if (typeof node.source === 'string') return node.source;
  throw measurementsError(`invalid measurement: ${field} must be a hex string`, { index, reason: 'type', field });
}

/** The reference's YAML encoding (TestEncodeM): numeric key order, 4-space indent, quoted hex. */
export function encodeMeasurementsYaml(m: ReadonlyMap<number, Measurement>): string {
  if (m.size === 0) return '{}\n';
  return [...m.keys()]
    .sort((a, b) => a - b)
    .map((i) => {
      const v = m.get(i)!;
      return `${i}:\n    expected: "${v.expected.toString('hex')}"\n    warnOnly: ${v.validationOpt === 'WarnOnly'}\n`;
    })
    .join('');
}

/** All measurements of one map must have the same length (32 for PCRs, 48 for TDX). */
function checkConsistentLength(m: Measurements): void {
  let length: number | undefined;
  for (const i of m.sortedIndices()) {
    const got = m.get(i)!.expected.length;
    if (length === undefined) length = got;
    else if (got !== length) {
      throw measurementsError(`inconsistent measurement length: index ${i}: expected ${length}, got ${got}`, { index: i, reason: 'inconsistent length', expected: length, actual: got });
    }
  }
}
