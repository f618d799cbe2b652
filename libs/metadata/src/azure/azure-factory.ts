import { BearerApi, CachedToken } from '../http/bearer-api.js';
import type { RetryPolicy } from '../http/metadata-http.js';
import { AZURE_ARM_BASE_URL, AzureArmPeers } from './azure-arm-peers.js';
import { AZURE_IMDS_BASE_URL, AzureImds } from './azure-imds.js';
import { AzureMetadata } from './azure-provider.js';

/** Endpoints of the Azure provider; defaults are the real ones, tests point them at loopback fakes. */
export interface AzureEndpoints {
  imdsBaseUrl?: string;
  armBaseUrl?: string;
  policy?: Partial<RetryPolicy>;
}

/** IMDS + ARM peers with the VM's managed-identity token, wired together. */
export function azureMetadata(e: AzureEndpoints = {}): AzureMetadata {
  const imds = new AzureImds(e.imdsBaseUrl ?? AZURE_IMDS_BASE_URL, e.policy);
  const token = new CachedToken((signal) => imds.accessToken(undefined, signal));
  return new AzureMetadata(imds, new AzureArmPeers(new BearerApi(e.armBaseUrl ?? AZURE_ARM_BASE_URL, 'Azure', 'ARM', token, e.policy)));
}
