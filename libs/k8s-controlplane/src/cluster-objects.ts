import * as k8s from '@kubernetes/client-node';
import {
  componentsConfigMapName,
  encodeComponents,
  JOINING_NODE_CRD,
  NODE_VERSION_CRD,
  NODE_VERSION_NAME,
  UPDATE_GROUP,
  UPDATE_VERSION,
} from '@asterism/k8s';
import type { components } from '@asterism/proto';
import { ensure } from './cluster-bootstrap.js';

async function waitForCrd(ext: k8s.ApiextensionsV1Api, name: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const crd = await ext.readCustomResourceDefinition({ name });
    if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (Date.now() > deadline) throw new Error(`CRD ${name} not established after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The cluster objects the joinservice reads, as a fresh Asterism cluster has them: the
 * JoiningNode and NodeVersion CRDs (established), the immutable components ConfigMap
 * `k8s-components-<hash>` in kube-system, the NodeVersion `constellation-version` pointing at it,
 * and the empty `internal-config` ConfigMap. Idempotent; returns the components ConfigMap name.
 */
export async function setUpClusterObjects(config: k8s.KubeConfig, opts: { components: components.Component[]; kubernetesVersion: string }): Promise<string> {
  const ext = config.makeApiClient(k8s.ApiextensionsV1Api);
  for (const crd of [JOINING_NODE_CRD, NODE_VERSION_CRD]) {
    await ensure(`CRD ${crd.metadata!.name}`, () => ext.createCustomResourceDefinition({ body: crd }));
    await waitForCrd(ext, crd.metadata!.name!);
  }
  const core = config.makeApiClient(k8s.CoreV1Api);
  const name = componentsConfigMapName(opts.components);
  await ensure(`ConfigMap kube-system/${name}`, () =>
    core.createNamespacedConfigMap({
      namespace: 'kube-system',
      body: { metadata: { name, namespace: 'kube-system' }, immutable: true, data: { components: encodeComponents(opts.components), 'cluster-version': opts.kubernetesVersion } },
    }),
  );
  await ensure('NodeVersion', () =>
    config.makeApiClient(k8s.CustomObjectsApi).createClusterCustomObject({
      group: UPDATE_GROUP,
      version: UPDATE_VERSION,
      plural: 'nodeversions',
      body: {
        apiVersion: `${UPDATE_GROUP}/${UPDATE_VERSION}`,
        kind: 'NodeVersion',
        metadata: { name: NODE_VERSION_NAME },
        spec: { kubernetesComponentsReference: name, kubernetesClusterVersion: opts.kubernetesVersion },
      },
    }),
  );
  await ensure('ConfigMap kube-system/internal-config', () =>
    core.createNamespacedConfigMap({ namespace: 'kube-system', body: { metadata: { name: 'internal-config', namespace: 'kube-system' }, data: {} } }),
  );
  return name;
}
