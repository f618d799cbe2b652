import * as k8s from '@kubernetes/client-node';
import { fromApiError } from '@asterism/k8s';

/** The group kubeadm puts node bootstrap tokens in (and so does the joinservice). */
export const NODE_TOKEN_GROUP = 'system:bootstrappers:kubeadm:default-node-token';

/** Creates an object; "already exists" is success (idempotent setup). */
export async function ensure(what: string, create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err) {
    const e = fromApiError(err, `creating ${what}`);
    if (e.code !== 'K8S_ALREADY_EXISTS') throw e;
  }
}

/**
 * What kubeadm's bootstrap-token phase sets up so that nodes can join with a bootstrap token:
 * the `cluster-info` ConfigMap in kube-public (the bootstrapsigner controller adds the
 * `jws-kubeconfig-<token id>` signatures), read access to it for bootstrap tokens and anonymous
 * discovery, the node-bootstrapper role for the token group, and CSR auto-approval bindings.
 * Idempotent.
 */
export async function setUpBootstrapTokenAccess(config: k8s.KubeConfig, opts: { server: string; caPem: string }): Promise<void> {
  const core = config.makeApiClient(k8s.CoreV1Api);
  const rbac = config.makeApiClient(k8s.RbacAuthorizationV1Api);
  await ensure('ConfigMap kube-public/cluster-info', () =>
    core.createNamespacedConfigMap({ namespace: 'kube-public', body: { metadata: { name: 'cluster-info', namespace: 'kube-public' }, data: { kubeconfig: clusterInfoKubeconfig(opts.server, opts.caPem) } } }),
  );
  await ensure('Role kube-public/kubeadm:bootstrap-signer-clusterinfo', () =>
    rbac.createNamespacedRole({
      namespace: 'kube-public',
      body: {
        metadata: { name: 'kubeadm:bootstrap-signer-clusterinfo', namespace: 'kube-public' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['cluster-info'], verbs: ['get'] }],
      },
    }),
  );
  await ensure('RoleBinding kube-public/kubeadm:bootstrap-signer-clusterinfo', () =>
    rbac.createNamespacedRoleBinding({
      namespace: 'kube-public',
      body: {
        metadata: { name: 'kubeadm:bootstrap-signer-clusterinfo', namespace: 'kube-public' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'kubeadm:bootstrap-signer-clusterinfo' },
        subjects: [
          { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:anonymous' },
          { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:bootstrappers' },
        ],
      },
    }),
  );
  const bindings: Array<[string, string, string]> = [
    ['kubeadm:kubelet-bootstrap', 'system:node-bootstrapper', NODE_TOKEN_GROUP],
    ['kubeadm:node-autoapprove-bootstrap', 'system:certificates.k8s.io:certificatesigningrequests:nodeclient', NODE_TOKEN_GROUP],
    ['kubeadm:node-autoapprove-certificate-rotation', 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', 'system:nodes'],
  ];
  for (const [name, role, group] of bindings) {
    await ensure(`ClusterRoleBinding ${name}`, () =>
      rbac.createClusterRoleBinding({
        body: {
          metadata: { name },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }],
        },
      }),
    );
  }
}

/** The kubeconfig stored in cluster-info: the cluster entry only (server + CA), no credentials. */
export function clusterInfoKubeconfig(server: string, caPem: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: ""',
    '  cluster:',
    `    certificate-authority-data: ${Buffer.from(caPem).toString('base64')}`,
    `    server: ${server}`,
    'contexts: []',
    'current-context: ""',
    'preferences: {}',
    'users: []',
    '',
  ].join('\n');
}
