/**
 * The attestation config the joinservice reads from `/var/config/attestationConfig`, one shape
 * per variant (docs/protocol/attestation-config.md). Field names are the JSON keys of the reference.
 */
import type { Measurements } from '../measurements/measurements.js';

/**
 * A minimum-version field: a concrete value, or `"latest"` (`wantLatest`), which the CLI
 * resolves and which stays `"latest"` when written back. Until resolved `value` is a zero
 * placeholder (0, or empty bytes for hex fields).
 */
export interface AttestationVersion<T> {
  value: T;
  wantLatest: boolean;
}

/** How Azure SEV-SNP treats an ID-key digest missing from the accepted list (docs/protocol/attestation-config.md). */
export type IdKeyDigestEnforcement = 'Equal' | 'MAAFallback' | 'WarnOnly';

/** Azure SEV-SNP firmware (ID key) signer policy. */
export interface SnpFirmwareSignerConfig {
  /** Accepted ID_KEY_DIGEST values, 48 bytes each. */
  acceptedKeyDigests: Buffer[];
  enforcementPolicy: IdKeyDigestEnforcement;
  /** MAA instance for `MAAFallback`; empty = unset. */
  maaURL: string;
}

/** Variants whose config is only the expected measurements. */
export type MeasurementsOnlyVariant = 'qemu-vtpm' | 'aws-nitro-tpm' | 'azure-trustedlaunch' | 'gcp-sev-es' | 'qemu-tdx' | 'dummy';

/** Config of a measurements-only variant (dummy: measurements may be empty). */
export interface MeasurementsOnlyConfig {
  variant: MeasurementsOnlyVariant;
  measurements: Measurements;
  /**
   * azure-trustedlaunch only, an extension of the reference's config: the root certificate (DER)
   * AK certificates must chain to; absent/`null` = the embedded default root
   * (docs/protocol/cloud-vtpm-variants.md §2.3).
   */
  akRootKey?: Buffer | null;
  /**
   * qemu-tdx only, an Asterism extension (config/current-gen.ts): the MRSERVICETD (48 bytes) a TD
   * 1.5 quote must carry; absent = not checked.
   */
  mrServiceTd?: Buffer;
}

/** Shared by the SEV-SNP variants: minimum launch TCB components and the AMD roots. */
export interface SevSnpConfigBase {
  measurements: Measurements;
  bootloaderVersion: AttestationVersion<number>;
  teeVersion: AttestationVersion<number>;
  snpVersion: AttestationVersion<number>;
  microcodeVersion: AttestationVersion<number>;
  /** ARK certificate (DER) used as the chain root; `null` = unset (fetched from AMD KDS). */
  amdRootKey: Buffer | null;
  /** ASK/ASVK certificate (DER) to use instead of the cached one; `null` = unset. */
  amdSigningKey: Buffer | null;
  /**
   * Asterism extensions (docs/protocol/attestation-config.md), absent = off: the lowest accepted
   * SNP report version (2-5), and mitigation bits that must be set in the report's
   * LAUNCH_MIT_VECTOR / CURRENT_MIT_VECTOR (version 5 reports).
   */
  minimumReportVersion?: number;
  requiredLaunchMitigations?: bigint;
  requiredCurrentMitigations?: bigint;
}

/** aws-sev-snp and gcp-sev-snp. */
export interface SevSnpConfig extends SevSnpConfigBase {
  variant: 'aws-sev-snp' | 'gcp-sev-snp';
}

/** azure-sev-snp: SEV-SNP plus the ID-key digest policy. */
export interface AzureSevSnpConfig extends SevSnpConfigBase {
  variant: 'azure-sev-snp';
  firmwareSignerConfig: SnpFirmwareSignerConfig;
}

/** azure-tdx: minimum SVNs and expected TD attributes for the TDX quote. */
export interface AzureTdxConfig {
  variant: 'azure-tdx';
  measurements: Measurements;
  qeSVN: AttestationVersion<number>;
  pceSVN: AttestationVersion<number>;
  /** 16 bytes, compared component-wise as minimums. */
  teeTCBSVN: AttestationVersion<Buffer>;
  /** 16 bytes. */
  qeVendorID: AttestationVersion<Buffer>;
  /** 48 bytes; empty = not checked. */
  mrSeam: Buffer;
  /** 8 bytes. */
  xfam: AttestationVersion<Buffer>;
  /** Intel SGX root certificate (DER); `null` = unset. */
  intelRootKey: Buffer | null;
}

/** Any variant's attestation config, discriminated by `variant`. */
export type AttestationConfig = MeasurementsOnlyConfig | SevSnpConfig | AzureSevSnpConfig | AzureTdxConfig;
