import type { Logger } from '@asterism/logger';
import type { MetadataProvider } from '@asterism/metadata';

/**
 * Candidate joinservice endpoints (docs/protocol/bootstrapper.md): the load balancer host, then every control
 * plane's VPC IP, each at `port`; duplicates, empty hosts and `exclude` (a rejoining control
 * plane skips itself) removed. Metadata failures are logged, not fatal.
 */
export async function joinServiceEndpoints(metadata: MetadataProvider, port: number, logger: Logger, opts: { signal?: AbortSignal; exclude?: string } = {}): Promise<string[]> {
  const hosts: string[] = [];
  try {
    const lb = await metadata.getLoadBalancerEndpoint(opts.signal);
    if (lb.host) hosts.push(lb.host);
  } catch (err) {
    logger.warn('reading load balancer endpoint failed', { err });
  }
  try {
    for (const i of await metadata.list(opts.signal)) if (i.Role === 'ControlPlane' && i.VPCIP) hosts.push(i.VPCIP);
  } catch (err) {
    logger.warn('listing instances failed', { err });
  }
  return [...new Set(hosts)].filter((h) => h !== opts.exclude).map((h) => (h.includes(':') && !h.startsWith('[') ? `[${h}]:${port}` : `${h}:${port}`));
}
