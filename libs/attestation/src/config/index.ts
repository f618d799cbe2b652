/** Per-variant attestation config (the joinservice's `attestationConfig` file) and its pieces. */
export { defaultAttestationConfig, encodeAttestationConfig, unmarshalAttestationConfig } from './attestation-config.js';
export { certificateFromPem, certificateToPem } from './certificate.js';
export { DEFAULT_ACCEPTED_KEY_DIGESTS } from './idkeydigest.js';
export { ARK_MILAN_PEM, INTEL_SGX_ROOT_CA_PEM } from './roots.js';
export type {
  AttestationConfig,
  AttestationVersion,
  AzureSevSnpConfig,
  AzureTdxConfig,
  IdKeyDigestEnforcement,
  MeasurementsOnlyConfig,
  MeasurementsOnlyVariant,
  SevSnpConfig,
  SevSnpConfigBase,
  SnpFirmwareSignerConfig,
} from './types.js';
