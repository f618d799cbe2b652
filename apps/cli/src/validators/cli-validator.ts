/**
 * The one place the CLI builds validators (`asterism init`, `verify`, `recover`): the variant's
 * validator with the same outside sources the joinservice gives it (apps/joinservice/src/main.ts
 * `validatorDependencies`), adapted to an operator's machine:
 * - azure-trustedlaunch: the HTTP fetcher for the AK chain's "CA Issuers" links the document
 *   lacks (docs/protocol/cloud-vtpm-variants.md §2.3); chains still end in the configured root;
 * - aws-nitro-tpm: EC2 DescribeImages through the AWS SDK client of libs/metadata with the SDK's
 *   default credential chain (docs/adr/0023-cloud-vtpm-variants.md); `--cloud-api-url` overrides
 *   the endpoint;
 * - gcp-sev-es, gcp-sev-snp: the Compute API with the operator's Google credentials
 *   (./gcp-credentials.ts) instead of the node's metadata-server token;
 * - qemu-tdx, azure-tdx: Intel PCS collateral through a collateral cache, optionally kept in a
 *   directory and optionally offline (./tdx-validator.ts);
 * - every other variant: its built-in validator as registered in libs/attestation.
 */
import {
  ComputeShieldedIdentitySource,
  GceComputeShieldedIdentity,
  httpCertificateFetcher,
  NOP_ATTESTATION_LOGGER,
  validatorFor,
  type AttestationConfig,
  type ValidatorDependencies,
  type Validator,
} from '@asterism/attestation';
import { RecordingTdxVerifier } from '../verify/tdx-report.js';
import { gcpAccessTokenSource } from './gcp-credentials.js';
import { tdxValidator, type TdxCollateralOptions } from './tdx-validator.js';

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

/** Outside sources of one variant, and how to release them. */
interface VariantSources {
  readonly deps: ValidatorDependencies;
  readonly close: () => void;
}

const NOTHING: VariantSources = { deps: {}, close: () => undefined };

/**
 * Builds the validator for `att`. Fails with CliValidatorError when the variant needs
 * credentials this machine does not have (gcp-sev-es, gcp-sev-snp), before any node is dialled.
 */
export async function buildCliValidator(att: AttestationConfig, options: CliValidatorOptions = {}): Promise<CliValidator> {
  if (att.variant === 'qemu-tdx' || att.variant === 'azure-tdx') return tdxValidator(att, options);
  const sources = await variantSources(att.variant, options);
  return {
    validator: validatorFor(att, NOP_ATTESTATION_LOGGER, sources.deps),
    tdx: new RecordingTdxVerifier(),
    close: async () => sources.close(),
  };
}

/** The dependencies `variant` needs from the operator's machine. */
async function variantSources(variant: string, options: CliValidatorOptions): Promise<VariantSources> {
  const clock = options.clock;
  switch (variant) {
    case 'azure-trustedlaunch':
      return { deps: { azureTrustedLaunch: { fetchCertificate: httpCertificateFetcher(), ...(clock ? { clock } : {}) } }, close: () => undefined };
    case 'aws-nitro-tpm':
      return awsSources(options);
    case 'gcp-sev-es': {
      const token = await gcpAccessTokenSource(variant, options.env ?? process.env);
      const identity = new ComputeShieldedIdentitySource(token, `${computeRoot(options)}/compute/v1`);
      return { deps: { gcpSevEs: { identity } }, close: () => undefined };
    }
    case 'gcp-sev-snp': {
      const token = await gcpAccessTokenSource(variant, options.env ?? process.env);
      return { deps: { snp: { gceIdentity: new GceComputeShieldedIdentity(token, computeRoot(options)), ...(clock ? { now: clock } : {}) } }, close: () => undefined };
    }
    default:
      return NOTHING;
  }
}

/**
 * EC2 DescribeImages through the AWS SDK (loaded only for this variant: the SDK clients take a
 * noticeable time to import). Credentials: the SDK's default chain (AWS_* variables, shared
 * config and SSO, or an instance role).
 */
async function awsSources(options: CliValidatorOptions): Promise<VariantSources> {
  const { AwsSdkCloudApi } = await import('@asterism/metadata');
  const images = new AwsSdkCloudApi(options.cloudApiUrl ? { endpoint: options.cloudApiUrl } : {});
  return { deps: { awsNitroTpm: { images } }, close: () => images.destroy() };
}

function computeRoot(options: CliValidatorOptions): string {
  return (options.cloudApiUrl ?? COMPUTE_API_ROOT).replace(/\/$/, '');
}
