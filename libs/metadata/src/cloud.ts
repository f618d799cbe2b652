import { awsMetadata } from './aws/aws-factory.js';
import { azureMetadata } from './azure/azure-factory.js';
import { gcpMetadata } from './gcp/gcp-factory.js';
import type { RetryPolicy } from './http/metadata-http.js';
import type { MetadataProvider } from './types.js';

/** The clouds with a metadata provider in this library. */
export type CloudKind = 'AWS' | 'Azure' | 'GCP';

/** `aws`, `Azure`, `GCP`... (case-insensitive, like the reference's provider strings) → the cloud, or undefined. */
export function parseCloudKind(csp: string): CloudKind | undefined {
  return ({ aws: 'AWS', azure: 'Azure', gcp: 'GCP' } as const)[csp.toLowerCase() as 'aws' | 'azure' | 'gcp'];
}

/** Endpoint overrides of {@link cloudMetadata} (tests and unusual networks); unset = the real endpoints. */
export interface CloudEndpoints {
  /** IMDS / metadata server base URL. */
  metadataUrl?: string | undefined;
  /** The cloud API (EC2+ELBv2 endpoint, ARM, Compute Engine) base URL. */
  apiUrl?: string | undefined;
  policy?: Partial<RetryPolicy>;
}

/** The metadata provider of `cloud`, talking to the real endpoints unless overridden. */
export function cloudMetadata(cloud: CloudKind, e: CloudEndpoints = {}): MetadataProvider {
  const policy = e.policy ? { policy: e.policy } : {};
  switch (cloud) {
    case 'AWS':
      return awsMetadata({ ...(e.metadataUrl ? { imdsBaseUrl: e.metadataUrl } : {}), ...(e.apiUrl ? { apiEndpoint: e.apiUrl } : {}), ...policy });
    case 'Azure':
      return azureMetadata({ ...(e.metadataUrl ? { imdsBaseUrl: e.metadataUrl } : {}), ...(e.apiUrl ? { armBaseUrl: e.apiUrl } : {}), ...policy });
    case 'GCP':
      return gcpMetadata({ ...(e.metadataUrl ? { metadataBaseUrl: e.metadataUrl } : {}), ...(e.apiUrl ? { computeBaseUrl: e.apiUrl } : {}), ...policy });
  }
}
