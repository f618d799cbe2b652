/** The contract of a variant's attestation config codec (docs/protocol/attestation-config.md); see ../variants/descriptor.ts. */
import type { Measurements } from '../measurements/measurements.js';
import type { FieldReader } from './fields.js';
import type { AttestationConfig } from './types.js';

/** The parsed JSON object of an attestation config and how to read its fields. */
export interface ConfigInput {
  readonly reader: FieldReader;
  readonly obj: Record<string, unknown>;
  /** The `measurements` member, decoded; `required` = its absence is CONFIG_INVALID. */
  measurements(required: boolean): Measurements;
}

/** A variant's attestation config: JSON decoding, the reference's byte-exact encoding, and its default (docs/protocol/attestation-config.md). */
export interface ConfigCodec {
  decode(input: ConfigInput): AttestationConfig;
  /** `measurements` is the already encoded `"measurements":{...}` member. */
  encode(config: AttestationConfig, measurements: string): string;
  defaults(measurements: Measurements): AttestationConfig;
}
