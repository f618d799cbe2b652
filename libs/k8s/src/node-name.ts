import { K8sError } from './errors.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Normalises a host name into a Kubernetes node name: lower-case, `_` -> `-`, then it must be a
 * DNS subdomain. Unlike the reference's joinservice copy (whose escaped regex rejected dots),
 * dotted names are accepted, as the bootstrapper's copy does.
 */
export function k8sCompliantHostname(name: string): string {
  const out = name.toLowerCase().replaceAll('_', '-');
  if (!DNS_SUBDOMAIN.test(out) || out.length > 253) {
    throw new K8sError('NODE_NAME_INVALID', `failed to generate a Kubernetes compliant hostname for ${JSON.stringify(name)}`, { details: { name } });
  }
  return out;
}
