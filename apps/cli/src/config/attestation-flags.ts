import { readFile } from 'node:fs/promises';
import { unmarshalAttestationConfig, Variant, variantDescriptor, type AttestationConfig } from '@asterism/attestation';
import { UsageError } from '../usage.js';
import type { CliConfig } from './cli-config.js';

/** The attestation config and its JSON exactly as the user wrote it (what join-config carries). */
export async function attestationConfig(values: { variant?: string | undefined; 'attestation-config'?: string | undefined }, file: CliConfig): Promise<AttestationConfig & { json: string }> {
  const variantName = values.variant ?? file.attestation?.variant;
  if (!variantName) throw new UsageError('the attestation variant is required (--variant or attestation.variant in the config file)');
  const variant = Variant.fromString(variantName);
  const path = values['attestation-config'] ?? file.attestation?.configFile;
  if (!path) {
    const json = '{"measurements":{}}';
    if (variantDescriptor(variant).insecure) return { ...unmarshalAttestationConfig(json, variant), json };
    throw new UsageError(`an attestation config with the expected measurements is required for ${variant.name} (--attestation-config)`);
  }
  const json = await readFile(path, 'utf8');
  return { ...unmarshalAttestationConfig(json, variant), json };
}
