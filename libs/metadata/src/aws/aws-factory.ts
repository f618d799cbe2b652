import type { RetryPolicy } from '../http/metadata-http.js';
import { AWS_IMDS_BASE_URL, AwsImds } from './aws-imds.js';
import { AwsMetadata } from './aws-provider.js';
import { AwsSdkCloudApi } from './aws-sdk-api.js';

/** Endpoints of the AWS provider; defaults are the real ones, tests point them at IMDS fake + moto. */
export interface AwsEndpoints {
  imdsBaseUrl?: string;
  /** EC2/ELBv2 endpoint override (credentials then come from the SDK's chain, e.g. AWS_ACCESS_KEY_ID). */
  apiEndpoint?: string;
  policy?: Partial<RetryPolicy>;
}

/** IMDSv2 + EC2/ELBv2 through the AWS SDK, wired together. */
export function awsMetadata(e: AwsEndpoints = {}): AwsMetadata {
  return new AwsMetadata(new AwsImds(e.imdsBaseUrl ?? AWS_IMDS_BASE_URL, e.policy), new AwsSdkCloudApi(e.apiEndpoint ? { endpoint: e.apiEndpoint } : {}));
}
