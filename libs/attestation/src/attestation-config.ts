/**
 * The per-variant attestation config (docs/protocol/attestation-config.md): the reference's
 * `UnmarshalAttestationConfig`, its byte-exact encoding and the `DefaultFor<Variant>`
 * constructors, dispatched through the variant table to each descriptor's codec.
 */
import { FieldReader } from './config/fields.js';
import type { AttestationConfig } from './config/types.js';
import { AttestationError } from './errors.js';
import { defaultsFor } from './measurement-defaults.js';
import { encodeMeasurementsJson, measurementsFromJsonValue } from './measurements/codec.js';
import type { Measurements } from './measurements/measurements.js';
import type { VariantId } from './variant.js';
import type { VariantDescriptor } from './variants/descriptor.js';
import { variantDescriptors } from './variants/table.js';

function descriptorOf(variant: VariantId | string): VariantDescriptor {
  const name = typeof variant === 'string' ? variant : variant.name;
  const hit = variantDescriptors().find((d) => d.variant.name === name);
  if (!hit) throw new AttestationError('VARIANT_UNKNOWN', `unknown variant: ${name}`, { details: { variant: name } });
  return hit;
}

/**
 * Parses the JSON the joinservice reads for `variant`. Keys match case-insensitively and unknown
 * keys are ignored, as in Go. Failures: VARIANT_UNKNOWN, or CONFIG_INVALID naming the field.
 */
export function unmarshalAttestationConfig(data: string | Uint8Array, variant: VariantId | string): AttestationConfig {
  const descriptor = descriptorOf(variant);
  const name = descriptor.variant.name;
  const reader = new FieldReader(name);
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof data === 'string' ? data : Buffer.from(data).toString('utf8'));
  } catch (err) {
    throw new AttestationError('CONFIG_INVALID', `invalid attestation config for ${name}: ${(err as Error).message}`, { details: { variant: name, field: '', reason: 'syntax' }, cause: err });
  }
  const obj = reader.object(parsed, '(document)');
  const measurements = (required: boolean): Measurements => {
    const raw = required ? reader.required(obj, 'measurements', 'measurements') : (reader.get(obj, 'measurements') ?? null);
    try {
      return measurementsFromJsonValue(raw);
    } catch (err) {
      throw reader.fail('measurements', (err as Error).message, err);
    }
  };
  return descriptor.config.decode({ reader, obj, measurements });
}

/**
 * The Go JSON the reference writes for a config (struct field order, omitempty rules): dummy
 * omits empty `measurements`, `maaURL` and `mrSeam` are omitted when empty, and `amdSigningKey`
 * is always written (`""` when unset; Go's omitempty never omits that struct-typed field).
 */
export function encodeAttestationConfig(cfg: AttestationConfig): string {
  return descriptorOf(cfg.variant).config.encode(cfg, `"measurements":${encodeMeasurementsJson(cfg.measurements)}`);
}

/**
 * The reference's default config for `variant`: default measurements of the variant's provider;
 * SEV-SNP versions `"latest"` and the ARK-Milan root; Azure SEV-SNP additionally `MAAFallback`
 * with the default digest; Azure TDX `"latest"` SVNs/attributes, no MRSEAM, the Intel SGX root.
 */
export function defaultAttestationConfig(variant: VariantId | string): AttestationConfig {
  const descriptor = descriptorOf(variant);
  return descriptor.config.defaults(defaultsFor(descriptor.csp, descriptor.variant.name));
}
