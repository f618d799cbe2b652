import { MetadataError } from './types.js';

/** Cloud tag / label / attribute keys a cluster's resources carry (docs/protocol/cloud-metadata.md). */
export const TAG_ROLE = 'constellation-role';
export const TAG_UID = 'constellation-uid';
export const TAG_INIT_SECRET_HASH = 'constellation-init-secret-hash';

/** The API server port behind every cloud load balancer. */
export const KUBERNETES_PORT = '6443';

/** Requires a tag value; a missing one is `METADATA_NOT_FOUND` naming the cloud and tag. */
export function requireTag(value: string | undefined, cloud: string, key: string): string {
  if (value === undefined || value === '') throw new MetadataError('METADATA_NOT_FOUND', `${cloud}: this instance has no ${key} tag`, { details: { tag: key } });
  return value;
}
