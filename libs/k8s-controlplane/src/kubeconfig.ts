import { stringify } from 'yaml';

/** A kubeconfig with one cluster, one user (client certificate or token) and one context. */
export function buildKubeconfig(opts: {
  server: string;
  caPem: string;
  clusterName?: string;
  userName: string;
  clientCertPem?: string;
  clientKeyPem?: string;
  token?: string;
}): string {
  const cluster = opts.clusterName ?? 'kubernetes';
  const context = `${opts.userName}@${cluster}`;
  const user: Record<string, string> = {};
  if (opts.clientCertPem) user['client-certificate-data'] = Buffer.from(opts.clientCertPem).toString('base64');
  if (opts.clientKeyPem) user['client-key-data'] = Buffer.from(opts.clientKeyPem).toString('base64');
  if (opts.token) user.token = opts.token;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: opts.server, 'certificate-authority-data': Buffer.from(opts.caPem).toString('base64') } }],
    users: [{ name: opts.userName, user }],
    contexts: [{ name: context, context: { cluster, user: opts.userName } }],
    'current-context': context,
  });
}
