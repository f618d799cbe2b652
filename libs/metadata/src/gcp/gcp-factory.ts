import { BearerApi, CachedToken } from '../http/bearer-api.js';
import type { RetryPolicy } from '../http/metadata-http.js';
import { GCP_COMPUTE_BASE_URL, GcpComputeRest } from './gcp-compute-api.js';
import { GCP_METADATA_BASE_URL, GcpMetadataServer } from './gcp-metadata-server.js';
import { GcpMetadata } from './gcp-provider.js';

/** Endpoints of the GCP provider; defaults are the real ones, tests point them at loopback fakes. */
export interface GcpEndpoints {
  metadataBaseUrl?: string;
  computeBaseUrl?: string;
  policy?: Partial<RetryPolicy>;
}

/** Metadata server + Compute Engine REST with the service-account token, wired together. */
export function gcpMetadata(e: GcpEndpoints = {}): GcpMetadata {
  const server = new GcpMetadataServer(e.metadataBaseUrl ?? GCP_METADATA_BASE_URL, e.policy);
  const token = new CachedToken((signal) => server.accessToken(signal));
  return new GcpMetadata(server, new GcpComputeRest(new BearerApi(e.computeBaseUrl ?? GCP_COMPUTE_BASE_URL, 'GCP', 'Compute Engine API', token, e.policy)));
}
