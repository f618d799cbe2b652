import { UsageError } from '../usage.js';
import type { CliValidatorOptions } from './cli-validator.js';

/** parseArgs options shared by init, verify and recover: the node-attestation flags and where validators get outside facts. */
export const VALIDATOR_FLAG_OPTIONS = {
  // What every command that attests a node reads: its config, the expected variant and measurements, a time limit.
  config: { type: 'string' },
  variant: { type: 'string' },
  'attestation-config': { type: 'string' },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  'cloud-api-url': { type: 'string' },
  'collateral-dir': { type: 'string' },
  'collateral-offline': { type: 'boolean' },
} as const;

/** Help text of {@link VALIDATOR_FLAG_OPTIONS} and the credentials they use. */
export const VALIDATOR_FLAGS_USAGE = `Validator sources (cloud and TDX variants):
  --cloud-api-url <url>         aws-nitro-tpm: EC2 endpoint; gcp-sev-es, gcp-sev-snp: Compute API
                                root; instead of the public ones (e.g. an emulator)
  --collateral-dir <dir>        qemu-tdx, azure-tdx: keep Intel PCS collateral here between runs
                                (verified again before every use)
  --collateral-offline          qemu-tdx, azure-tdx: never contact Intel PCS, use --collateral-dir
  Credentials: aws-nitro-tpm uses the AWS SDK's default chain (AWS_* variables, ~/.aws, SSO,
  instance role); gcp-sev-es and gcp-sev-snp use GOOGLE_OAUTH_ACCESS_TOKEN, else Application
  Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, or gcloud auth application-default login).`;

/** The validator options of parsed flags; bad combinations are usage errors. */
export function validatorOptions(
  values: { 'cloud-api-url'?: string | undefined; 'collateral-dir'?: string | undefined; 'collateral-offline'?: boolean | undefined },
  env: NodeJS.ProcessEnv = process.env,
): CliValidatorOptions {
  const url = values['cloud-api-url'];
  if (url !== undefined && !/^https?:\/\/[^/]/.test(url)) throw new UsageError(`invalid --cloud-api-url "${url}": want an http(s) URL`);
  if (values['collateral-offline'] && !values['collateral-dir']) throw new UsageError('--collateral-offline needs --collateral-dir (where the collateral is kept)');
  return {
    env,
    ...(url ? { cloudApiUrl: url } : {}),
    ...(values['collateral-dir'] ? { collateralDir: values['collateral-dir'] } : {}),
    ...(values['collateral-offline'] ? { collateralOffline: true } : {}),
  };
}
