import * as k8s from '@kubernetes/client-node';
import { KeepAliveKubeConfig } from './keep-alive.js';

/**
 * A KubeConfig for one API server and one identity (bearer token or client certificate); its
 * clients share one keep-alive connection pool.
 */
export function kubeConfigFor(server: string, caPem: string, user: { token?: string; certPem?: string; keyPem?: string }): k8s.KubeConfig {
  const kc = new KeepAliveKubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'cluster', server, caData: Buffer.from(caPem).toString('base64'), skipTLSVerify: false }],
    users: [
      {
        name: 'user',
        ...(user.token ? { token: user.token } : {}),
        ...(user.certPem ? { certData: Buffer.from(user.certPem).toString('base64') } : {}),
        ...(user.keyPem ? { keyData: Buffer.from(user.keyPem).toString('base64') } : {}),
      },
    ],
    contexts: [{ name: 'ctx', cluster: 'cluster', user: 'user' }],
    currentContext: 'ctx',
  });
  return kc;
}
