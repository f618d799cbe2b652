/**
 * Decoding, encoding and defaults of the per-variant attestation config (docs/protocol/attestation-config.md): the
 * reference's `UnmarshalAttestationConfig` and the `DefaultFor<Variant>` constructors.
 *
 * Stricter than the reference where silence would weaken attestation: `measurements` (except
 * for dummy), every version field and `firmwareSignerConfig.enforcementPolicy` must be present
 * and non-null (Go would read them as zero, i.e. "accept anything").
 */
import { AttestationError } from '../errors.js';
import { encodeMeasurementsJson, measurementsFromJsonValue } from '../measurements/codec.js';
import { defaultsFor } from '../measurements/defaults.js';
import { goJsonString } from '../measurements/go-json-string.js';
import type { Measurements } from '../measurements/measurements.js';
import { Variant, VARIANTS, type CloudProvider, type VariantName } from '../variant.js';
import { certificateFromPem } from './certificate.js';
import { decodeMrServiceTd, decodeSnpReportRequirements, encodeSnpReportRequirements } from './current-gen.js';
import { encodeCertificate, encodeHexVersion, encodeUintVersion, FieldReader } from './fields.js';
import { DEFAULT_ACCEPTED_KEY_DIGESTS, decodeFirmwareSignerConfig, encodeFirmwareSignerConfig } from './idkeydigest.js';
import { ARK_MILAN_PEM, INTEL_SGX_ROOT_CA_PEM } from './roots.js';
import type { AttestationConfig, AttestationVersion, AzureTdxConfig, MeasurementsOnlyVariant, SevSnpConfigBase } from './types.js';

const MEASUREMENTS_ONLY: readonly string[] = ['qemu-vtpm', 'aws-nitro-tpm', 'azure-trustedlaunch', 'gcp-sev-es', 'qemu-tdx', 'dummy'];

function variantName(variant: Variant | string): VariantName {
  const name = typeof variant === 'string' ? variant : variant.name;
  if (!Object.hasOwn(VARIANTS, name)) throw new AttestationError('VARIANT_UNKNOWN', `unknown variant: ${name}`, { details: { variant: name } });
  return name as VariantName;
}

/**
 * Parses the JSON the joinservice reads for `variant`. Keys match case-insensitively and unknown
 * keys are ignored, as in Go. Failures: VARIANT_UNKNOWN, or CONFIG_INVALID naming the field.
 */
export function unmarshalAttestationConfig(data: string | Uint8Array, variant: Variant | string): AttestationConfig {
  const name = variantName(variant);
  const r = new FieldReader(name);
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof data === 'string' ? data : Buffer.from(data).toString('utf8'));
  } catch (err) {
    throw new AttestationError('CONFIG_INVALID', `invalid attestation config for ${name}: ${(err as Error).message}`, { details: { variant: name, field: '', reason: 'syntax' }, cause: err });
  }
  const obj = r.object(parsed, '(document)');
  const measurements = (required: boolean): Measurements => {
    const raw = required ? r.required(obj, 'measurements', 'measurements') : (r.get(obj, 'measurements') ?? null);
    try {
      return measurementsFromJsonValue(raw);
    } catch (err) {
      throw r.fail('measurements', (err as Error).message, err);
    }
  };

  if (name === 'azure-trustedlaunch') return { variant: name, measurements: measurements(true), akRootKey: r.certificate(r.get(obj, 'akRootKey') ?? '', 'akRootKey') };
  if (name === 'qemu-tdx') {
    const mrServiceTd = decodeMrServiceTd(r, obj);
    return { variant: name, measurements: measurements(true), ...(mrServiceTd ? { mrServiceTd } : {}) };
  }
  if (MEASUREMENTS_ONLY.includes(name)) return { variant: name as MeasurementsOnlyVariant, measurements: measurements(name !== 'dummy') };

  if (name === 'azure-tdx') {
    const hexv = (key: string, len: number) => r.hexVersion(r.required(obj, key, key), key, len);
    const uintv = (key: string) => r.uintVersion(r.required(obj, key, key), 0xffff, key);
    return {
      variant: name,
      measurements: measurements(true),
      qeSVN: uintv('qeSVN'),
      pceSVN: uintv('pceSVN'),
      teeTCBSVN: hexv('teeTCBSVN', 16),
      qeVendorID: hexv('qeVendorID', 16),
      mrSeam: r.hex(r.get(obj, 'mrSeam'), 'mrSeam', 48),
      xfam: hexv('xfam', 8),
      intelRootKey: r.certificate(r.get(obj, 'intelRootKey'), 'intelRootKey'),
    };
  }

  const version = (key: string) => r.uintVersion(r.required(obj, key, key), 0xff, key);
  const base: SevSnpConfigBase = {
    measurements: measurements(true),
    bootloaderVersion: version('bootloaderVersion'),
    teeVersion: version('teeVersion'),
    snpVersion: version('snpVersion'),
    microcodeVersion: version('microcodeVersion'),
    amdRootKey: r.certificate(r.get(obj, 'amdRootKey'), 'amdRootKey'),
    amdSigningKey: r.certificate(r.get(obj, 'amdSigningKey'), 'amdSigningKey'),
    ...decodeSnpReportRequirements(r, obj),
  };
  if (name === 'azure-sev-snp') {
    return { variant: name, ...base, firmwareSignerConfig: decodeFirmwareSignerConfig(r, r.required(obj, 'firmwareSignerConfig', 'firmwareSignerConfig'), 'firmwareSignerConfig') };
  }
  return { variant: name as 'aws-sev-snp' | 'gcp-sev-snp', ...base };
}

/**
 * The Go JSON the reference writes for a config (struct field order, omitempty rules): dummy
 * omits empty `measurements`, `maaURL` and `mrSeam` are omitted when empty, and `amdSigningKey`
 * is always written (`""` when unset; Go's omitempty never omits that struct-typed field).
 */
export function encodeAttestationConfig(cfg: AttestationConfig): string {
  const m = `"measurements":${encodeMeasurementsJson(cfg.measurements)}`;
  switch (cfg.variant) {
    case 'dummy':
      return cfg.measurements.size === 0 ? '{}' : `{${m}}`;
    case 'azure-trustedlaunch':
      // akRootKey is our extension (docs/protocol/cloud-vtpm-variants.md §2.3): written only when set.
      return cfg.akRootKey ? `{${m},"akRootKey":${encodeCertificate(cfg.akRootKey)}}` : `{${m}}`;
    case 'qemu-tdx':
      // mrServiceTd is our extension (config/current-gen.ts): written only when set.
      return cfg.mrServiceTd ? `{${m},"mrServiceTd":"${cfg.mrServiceTd.toString('hex')}"}` : `{${m}}`;
    case 'qemu-vtpm':
    case 'aws-nitro-tpm':
    case 'gcp-sev-es':
      return `{${m}}`;
    case 'azure-tdx': {
      const seam = cfg.mrSeam.length === 0 ? '' : `,"mrSeam":"${cfg.mrSeam.toString('hex')}"`;
      return (
        `{${m},"qeSVN":${encodeUintVersion(cfg.qeSVN)},"pceSVN":${encodeUintVersion(cfg.pceSVN)},"teeTCBSVN":${encodeHexVersion(cfg.teeTCBSVN)},` +
        `"qeVendorID":${encodeHexVersion(cfg.qeVendorID)}${seam},"xfam":${encodeHexVersion(cfg.xfam)},"intelRootKey":${encodeCertificate(cfg.intelRootKey)}}`
      );
    }
    default: {
      const versions =
        `"bootloaderVersion":${encodeUintVersion(cfg.bootloaderVersion)},"teeVersion":${encodeUintVersion(cfg.teeVersion)},` +
        `"snpVersion":${encodeUintVersion(cfg.snpVersion)},"microcodeVersion":${encodeUintVersion(cfg.microcodeVersion)}`;
      const signer = cfg.variant === 'azure-sev-snp' ? `,"firmwareSignerConfig":${encodeFirmwareSignerConfig(cfg.firmwareSignerConfig, goJsonString)}` : '';
      return `{${m},${versions}${signer},"amdRootKey":${encodeCertificate(cfg.amdRootKey)},"amdSigningKey":${encodeCertificate(cfg.amdSigningKey)}${encodeSnpReportRequirements(cfg)}}`;
    }
  }
}

const PROVIDER: Record<string, CloudProvider> = { unknown: 'Unknown', aws: 'AWS', azure: 'Azure', gcp: 'GCP', qemu: 'QEMU' };

function embedded(pem: string): Buffer {
  const der = certificateFromPem(pem);
  if (typeof der === 'string') throw new Error(`embedded root certificate: ${der}`);
  return der;
}

const latest = (): AttestationVersion<number> => ({ value: 0, wantLatest: true });
const latestHex = (): AttestationVersion<Buffer> => ({ value: Buffer.alloc(0), wantLatest: true });

/**
 * The reference's default config for `variant`: default measurements of the variant's provider;
 * SEV-SNP versions `"latest"` and the ARK-Milan root; Azure SEV-SNP additionally `MAAFallback`
 * with the default digest; Azure TDX `"latest"` SVNs/attributes, no MRSEAM, the Intel SGX root.
 */
export function defaultAttestationConfig(variant: Variant | string): AttestationConfig {
  const name = variantName(variant);
  const measurements = defaultsFor(PROVIDER[VARIANTS[name].provider]!, name);
  if (MEASUREMENTS_ONLY.includes(name)) return { variant: name as MeasurementsOnlyVariant, measurements };
  if (name === 'azure-tdx') {
    const tdx: AzureTdxConfig = {
      variant: name,
      measurements,
      qeSVN: latest(),
      pceSVN: latest(),
      teeTCBSVN: latestHex(),
      qeVendorID: latestHex(),
      mrSeam: Buffer.alloc(0),
      xfam: latestHex(),
      intelRootKey: embedded(INTEL_SGX_ROOT_CA_PEM),
    };
    return tdx;
  }
  const base: SevSnpConfigBase = {
    measurements,
    bootloaderVersion: latest(),
    teeVersion: latest(),
    snpVersion: latest(),
    microcodeVersion: latest(),
    amdRootKey: embedded(ARK_MILAN_PEM),
    amdSigningKey: null,
  };
  if (name === 'azure-sev-snp') {
    return {
      variant: name,
      ...base,
      firmwareSignerConfig: { acceptedKeyDigests: DEFAULT_ACCEPTED_KEY_DIGESTS.map((d) => Buffer.from(d, 'hex')), enforcementPolicy: 'MAAFallback', maaURL: '' },
    };
  }
  return { variant: name as 'aws-sev-snp' | 'gcp-sev-snp', ...base };
}
