/**
 * Building blocks of the variants' config codecs (docs/protocol/attestation-config.md): the
 * measurements-only shape and the SEV-SNP base shared by the three SEV-SNP variants. Each variant's
 * descriptor (../variants/<name>.ts) composes its codec from these; the dispatch by variant is in
 * ../attestation-config.ts.
 *
 * Stricter than the reference where silence would weaken attestation: `measurements` (except for
 * insecure variants) and every version field must be present and non-null (Go would read them as
 * zero, i.e. "accept anything").
 */
import type { Measurements } from '../measurements/measurements.js';
import type { ConfigCodec, ConfigInput } from './codec.js';
import { certificateFromPem } from './certificate.js';
import { decodeSnpReportRequirements, encodeSnpReportRequirements } from './current-gen.js';
import { encodeCertificate, encodeUintVersion } from './fields.js';
import { ARK_MILAN_PEM } from './roots.js';
import type { AttestationConfig, AttestationVersion, MeasurementsOnlyVariant, SevSnpConfigBase } from './types.js';

/**
 * A config that is only `measurements`. `optional`: the member may be absent, and an empty map is
 * written as `{}` (the reference's omitempty on dummy).
 */
export function measurementsOnlyCodec(variant: string, options: { optional?: boolean } = {}): ConfigCodec {
  const name = variant as MeasurementsOnlyVariant;
  return {
    decode: (input) => ({ variant: name, measurements: input.measurements(!options.optional) }),
    encode: (cfg, m) => (options.optional && cfg.measurements.size === 0 ? '{}' : `{${m}}`),
    defaults: (measurements) => ({ variant: name, measurements }),
  };
}

/** An embedded PEM root as DER (a broken embedded root is a build defect). */
export function embeddedRoot(pem: string): Buffer {
  const der = certificateFromPem(pem);
  if (typeof der === 'string') throw new Error(`embedded root certificate: ${der}`);
  return der;
}

/** A `"latest"` version with its zero placeholder. */
export const latestVersion = (): AttestationVersion<number> => ({ value: 0, wantLatest: true });
/** A `"latest"` hex version with its empty placeholder. */
export const latestHexVersion = (): AttestationVersion<Buffer> => ({ value: Buffer.alloc(0), wantLatest: true });

/** The SEV-SNP base: four minimum TCB versions, the AMD keys and the Asterism report requirements. */
export function decodeSevSnpBase({ reader: r, obj, measurements }: ConfigInput): SevSnpConfigBase {
  const version = (key: string) => r.uintVersion(r.required(obj, key, key), 0xff, key);
  return {
    measurements: measurements(true),
    bootloaderVersion: version('bootloaderVersion'),
    teeVersion: version('teeVersion'),
    snpVersion: version('snpVersion'),
    microcodeVersion: version('microcodeVersion'),
    amdRootKey: r.certificate(r.get(obj, 'amdRootKey'), 'amdRootKey'),
    amdSigningKey: r.certificate(r.get(obj, 'amdSigningKey'), 'amdSigningKey'),
    ...decodeSnpReportRequirements(r, obj),
  };
}

/**
 * The reference's bytes of a SEV-SNP config: `extra` (e.g. Azure's `"firmwareSignerConfig":...`)
 * goes between the versions and the keys; `amdSigningKey` is always written (`""` when unset; Go's
 * omitempty never omits that struct-typed field).
 */
export function encodeSevSnp(cfg: SevSnpConfigBase, m: string, extra = ''): string {
  const versions =
    `"bootloaderVersion":${encodeUintVersion(cfg.bootloaderVersion)},"teeVersion":${encodeUintVersion(cfg.teeVersion)},` +
    `"snpVersion":${encodeUintVersion(cfg.snpVersion)},"microcodeVersion":${encodeUintVersion(cfg.microcodeVersion)}`;
  return `{${m},${versions}${extra},"amdRootKey":${encodeCertificate(cfg.amdRootKey)},"amdSigningKey":${encodeCertificate(cfg.amdSigningKey)}${encodeSnpReportRequirements(cfg)}}`;
}

/** The reference's SEV-SNP default: versions `"latest"`, the ARK-Milan root, no signing key. */
export function defaultSevSnpBase(measurements: Measurements): SevSnpConfigBase {
  return {
    measurements,
    bootloaderVersion: latestVersion(),
    teeVersion: latestVersion(),
    snpVersion: latestVersion(),
    microcodeVersion: latestVersion(),
    amdRootKey: embeddedRoot(ARK_MILAN_PEM),
    amdSigningKey: null,
  };
}

/** The SEV-SNP codec of a variant without extra members (aws-sev-snp, gcp-sev-snp). */
export function sevSnpCodec(variant: 'aws-sev-snp' | 'gcp-sev-snp'): ConfigCodec {
  return {
    decode: (input) => ({ variant, ...decodeSevSnpBase(input) }),
    encode: (cfg, m) => encodeSevSnp(cfg as SevSnpConfigBase, m),
    defaults: (measurements): AttestationConfig => ({ variant, ...defaultSevSnpBase(measurements) }),
  };
}
