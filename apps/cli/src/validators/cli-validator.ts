/**
 * The one place the CLI builds validators (`asterism init`, `verify`, `recover`): the variant's
 * validator from the variant table (libs/attestation; docs/adr/0035-variant-descriptor-table.md)
 * with the outside sources its descriptor names, built the way an operator's machine can
 * (the joinservice and the monitor build the same kinds for a cluster: libs/validator-sources):
 * - ak-ca-issuers: the HTTP fetcher for the AK chain's "CA Issuers" links the document lacks
 *   (docs/protocol/cloud-vtpm-variants.md §2.3); chains still end in the configured root;
 * - ec2-images: EC2 DescribeImages through the AWS SDK client of libs/metadata with the SDK's
 *   default credential chain (docs/adr/0023-cloud-vtpm-variants.md); `--cloud-api-url` overrides
 *   the endpoint;
 * - gce-shielded-identity: the Compute API with the operator's Google credentials
 *   (./gcp-credentials.ts) instead of the node's metadata-server token;
 * - intel-pcs: Intel PCS collateral through a collateral cache, optionally kept in a directory and
 *   optionally offline (./tdx-validator.ts);
 * - amd-kds, maa: the validators' own defaults (AMD KDS and MAA online), with the run's clock.
 */
import {
  ComputeShieldedIdentitySource,
  GceComputeShieldedIdentity,
  httpCertificateFetcher,
  NOP_ATTESTATION_LOGGER,
  validatorFor,
  variantDescriptor,
  type AttestationConfig,
  type ValidatorDependencies,
  type ValidatorSourceKind,
  type Validator,
} from '@asterism/attestation';
import { RecordingTdxVerifier } from '../verify/tdx-report.js';
import { gcpAccessTokenSource } from './gcp-credentials.js';
import { tdxSources, type TdxCollateralOptions } from './tdx-validator.js';

/** Public Compute API root (paths add `/compute/v1`). */
const COMPUTE_API_ROOT = 'https://compute.googleapis.com';

/** What the CLI's validators may use besides the attestation config. */
export interface CliValidatorOptions extends TdxCollateralOptions {
  /** aws-nitro-tpm: EC2 endpoint; gcp-sev-es / gcp-sev-snp: Compute API root (`--cloud-api-url`). */
  readonly cloudApiUrl?: string;
  /** Where credentials come from (Google variables; the AWS SDK reads `process.env` itself). */
  readonly env?: NodeJS.ProcessEnv;
}

/** A validator ready for one CLI run. */
export interface CliValidator {
  readonly validator: Validator;
  /** The DCAP outcome of the last TDX quote (for the report); unused by other variants. */
  readonly tdx: RecordingTdxVerifier;
  /** Releases SDK clients and collateral caches; call once the run is over. */
  close(): Promise<void>;
}

/** One built source: its part of the dependencies, the TDX recorder if it has one, and how to release it. */
interface SourcePart {
  readonly deps: ValidatorDependencies;
  readonly tdx?: RecordingTdxVerifier;
  readonly close?: () => Promise<void> | void;
}

/** How this machine provides each kind of source. */
const SOURCES: Readonly<Record<ValidatorSourceKind, (att: AttestationConfig, options: CliValidatorOptions) => Promise<SourcePart>>> = {
  'ak-ca-issuers': async (_att, { clock }) => ({ deps: { azureTrustedLaunch: { fetchCertificate: httpCertificateFetcher(), ...(clock ? { clock } : {}) } } }),
  'ec2-images': awsSources,
  'gce-shielded-identity': async (att, options) => {
    const token = await gcpAccessTokenSource(att.variant, options.env ?? process.env);
    const root = computeRoot(options);
    return { deps: { gcpSevEs: { identity: new ComputeShieldedIdentitySource(token, `${root}/compute/v1`) }, snp: { gceIdentity: new GceComputeShieldedIdentity(token, root) } } };
  },
  'amd-kds': async (_att, { clock }) => ({ deps: { snp: clock ? { now: clock } : {} } }),
  maa: async () => ({ deps: {} }),
  'intel-pcs': tdxSources,
};

/**
 * Builds the validator for `att`. Fails with CliValidatorError when the variant needs
 * credentials this machine does not have (gcp-sev-es, gcp-sev-snp), before any node is dialled.
 */
export async function buildCliValidator(att: AttestationConfig, options: CliValidatorOptions = {}): Promise<CliValidator> {
  const parts: SourcePart[] = [];
  const close = async () => {
    for (const p of parts) await p.close?.();
  };
  try {
    for (const kind of variantDescriptor(att.variant).sources) parts.push(await SOURCES[kind](att, options));
    return { validator: validatorFor(att, NOP_ATTESTATION_LOGGER, mergeDependencies(parts)), tdx: parts.find((p) => p.tdx)?.tdx ?? new RecordingTdxVerifier(), close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The parts' dependencies in one object (parts of one slot, e.g. `snp`, are combined). */
function mergeDependencies(parts: readonly SourcePart[]): ValidatorDependencies {
  const out: Record<string, object> = {};
  for (const { deps } of parts) for (const [slot, value] of Object.entries(deps)) out[slot] = { ...out[slot], ...(value as object) };
  return out as ValidatorDependencies;
}

/**
 * EC2 DescribeImages through the AWS SDK (loaded only for this source: the SDK clients take a
 * noticeable time to import). Credentials: the SDK's default chain (AWS_* variables, shared
 * config and SSO, or an instance role).
 */
async function awsSources(_att: AttestationConfig, options: CliValidatorOptions): Promise<SourcePart> {
  const { AwsSdkCloudApi } = await import('@asterism/metadata');
  const images = new AwsSdkCloudApi(options.cloudApiUrl ? { endpoint: options.cloudApiUrl } : {});
  return { deps: { awsNitroTpm: { images } }, close: () => images.destroy() };
}

function computeRoot(options: CliValidatorOptions): string {
  return (options.cloudApiUrl ?? COMPUTE_API_ROOT).replace(/\/$/, '');
}
