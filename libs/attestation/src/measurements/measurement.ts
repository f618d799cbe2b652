/**
 * One expected measurement (docs/protocol/measurements.md): the expected register value and whether a mismatch
 * fails attestation (`Enforce`) or is only logged (`WarnOnly`). Also the decoding rules for a
 * single JSON/YAML value, shared by both codecs.
 */
import { AttestationError } from '../errors.js';
import { goField } from '../go-json.js';

/** How a mismatch is handled. The reference stores this as a bool `warnOnly` (true = WarnOnly). */
export type ValidationOption = 'Enforce' | 'WarnOnly';

/** An expected register value and its validation option. */
export interface Measurement {
  readonly expected: Buffer;
  readonly validationOpt: ValidationOption;
}

/** Length of a SHA-256 PCR value. */
export const PCR_MEASUREMENT_LENGTH = 32;
/** Length of a TDX MRTD/RTMR value. */
export const TDX_MEASUREMENT_LENGTH = 48;
/** PCR extended with the cluster ID when a node is initialized or joins. */
export const PCR_INDEX_CLUSTER_ID = 15;
/** Reserved for an owner ID; unused by the reference. */
export const PCR_INDEX_OWNER_ID = 16;
/** RTMR extended with the cluster ID on TDX. */
export const RTMR_INDEX_CLUSTER_ID = 2;
/** Measurement index of that RTMR (index 0 is MRTD, so RTMRn is n + 1). */
export const TDX_INDEX_CLUSTER_ID = RTMR_INDEX_CLUSTER_ID + 1;

/** A measurement whose bytes are all `b` (for example all-zero PCR 15). */
export function withAllBytes(b: number, validationOpt: ValidationOption, length: number = PCR_MEASUREMENT_LENGTH): Measurement {
  return { expected: Buffer.alloc(length, b), validationOpt };
}

/** The OSS build's stand-in for real values: bytes `12 34` repeated, Enforce. */
export function placeHolderMeasurement(length: number = PCR_MEASUREMENT_LENGTH): Measurement {
  const expected = Buffer.alloc(length - (length % 2));
  for (let i = 0; i < expected.length; i += 2) {
    expected[i] = 0x12;
    expected[i + 1] = 0x34;
  }
  return { expected, validationOpt: 'Enforce' };
}

/**
 * Builds a MEASUREMENTS_INVALID error; `details` says which index/field and why. With an
 * `index` in details the message is prefixed `index <i>: ` (the reference text follows).
 */
export function measurementsError(message: string, details: Record<string, unknown> = {}, cause?: unknown): AttestationError {
  const prefix = typeof details.index === 'number' && message.startsWith('invalid measurement:') ? `index ${details.index}: ` : '';
  return new AttestationError('MEASUREMENTS_INVALID', prefix + message, { details, cause });
}

/**
 * Strict hex decoding like Go's `hex.DecodeString`: upper and lower case, even length, nothing
 * else. Returns the reason instead of throwing so callers can wrap it with context.
 */
export function decodeHex(s: string): Buffer | string {
  if (s.length % 2 !== 0) return `odd length hex string (${s.length} characters)`;
  const bad = /[^0-9a-fA-F]/.exec(s);
  if (bad) return `invalid hex character ${JSON.stringify(bad[0])} at offset ${bad.index}`;
  return Buffer.from(s, 'hex');
}

/** Checks the decoded length (32 or 48) and builds the measurement. */
export function measurementFromHex(hex: string, validationOpt: ValidationOption, index?: number): Measurement {
  const at = index === undefined ? {} : { index };
  const decoded = decodeHex(hex);
  if (typeof decoded === 'string') {
    throw measurementsError(`invalid measurement: decoding hex: ${decoded}`, { ...at, reason: 'hex' });
  }
  if (decoded.length !== PCR_MEASUREMENT_LENGTH && decoded.length !== TDX_MEASUREMENT_LENGTH) {
    throw measurementsError(`invalid measurement: invalid length: ${decoded.length}`, { ...at, reason: 'length', length: decoded.length });
  }
  return { expected: decoded, validationOpt };
}

/**
 * Decodes one measurement from a parsed JSON value: `{"expected": hex, "warnOnly": bool}` (keys
 * case-insensitive, `warnOnly` optional) or the legacy bare hex string (always Enforce). Base64
 * is rejected; `null` behaves like an empty object and fails the length check.
 */
export function measurementFromJsonValue(value: unknown, index?: number): Measurement {
  const at = index === undefined ? {} : { index };
  if (typeof value === 'string') return measurementFromHex(value, 'Enforce', index);
  if (value !== null && (typeof value !== 'object' || Array.isArray(value))) {
    throw measurementsError(`invalid measurement: expected an object or a hex string, got ${jsonType(value)}`, { ...at, reason: 'type' });
  }
  const obj = (value ?? {}) as Record<string, unknown>;
  const expected = goField(obj, 'expected') ?? '';
  if (typeof expected !== 'string') {
    throw measurementsError(`invalid measurement: expected must be a hex string, got ${jsonType(expected)}`, { ...at, reason: 'type', field: 'expected' });
  }
  const warnOnly = goField(obj, 'warnOnly') ?? false;
  if (typeof warnOnly !== 'boolean') {
    throw measurementsError(`invalid measurement: warnOnly must be a boolean, got ${jsonType(warnOnly)}`, { ...at, reason: 'type', field: 'warnOnly' });
  }
  return measurementFromHex(expected, warnOnly ? 'WarnOnly' : 'Enforce', index);
}

/** Go JSON of one measurement: `{"expected":"<lower hex>","warnOnly":<bool>}`. */
export function measurementToJson(m: Measurement): string {
  return `{"expected":"${m.expected.toString('hex')}","warnOnly":${m.validationOpt === 'WarnOnly'}}`;
}

/** A JSON type name for error messages. */
export function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}
