/**
 * The cluster's version record during an upgrade (docs/protocol/upgrade.md "Apply"): a new
 * immutable components ConfigMap (the target row plus the service images the current list
 * carries) and annotations on the NodeVersion `constellation-version` record the upgrade in
 * progress (`asterism.dev/upgrade-from`, `-to`, `-components`) until the last node is done, so a
 * re-run resumes it. The NodeVersion's spec (what joining nodes install) moves to the target only
 * once the first control plane runs it; a rollout stopped before that leaves the spec as it was.
 */
import * as k8s from '@kubernetes/client-node';
import { componentsConfigMapName, decodeComponents, encodeComponents, fromApiError, NODE_VERSION_NAME, UPDATE_GROUP, UPDATE_VERSION, type KubeClients } from '@asterism/k8s';
import type { components } from '@asterism/proto';
import { isImageInstallPath, wireComponents, type VersionRow } from '@asterism/versions';

/** Annotation names of an upgrade in progress. */
export const UPGRADE_FROM = 'asterism.dev/upgrade-from';
export const UPGRADE_TO = 'asterism.dev/upgrade-to';
export const UPGRADE_COMPONENTS = 'asterism.dev/upgrade-components';

/** What the NodeVersion says. */
export interface VersionRecord {
  clusterVersion: string;
  componentsReference: string;
  /** Set while an upgrade runs (from the annotations); `components` names the target's ConfigMap. */
  inProgress?: { from: string; to: string; components?: string };
}

type Clients = Pick<KubeClients, 'core' | 'custom'>;

/** Reads the NodeVersion. */
export async function readVersionRecord(c: Clients): Promise<VersionRecord> {
  let obj: { metadata?: { annotations?: Record<string, string> }; spec?: { kubernetesClusterVersion?: string; kubernetesComponentsReference?: string } };
  try {
    obj = (await c.custom.getClusterCustomObject({ group: UPDATE_GROUP, version: UPDATE_VERSION, plural: 'nodeversions', name: NODE_VERSION_NAME })) as typeof obj;
  } catch (err) {
    throw fromApiError(err, `getting NodeVersion ${NODE_VERSION_NAME}`);
  }
  const a = obj.metadata?.annotations ?? {};
  const from = a[UPGRADE_FROM];
  const to = a[UPGRADE_TO];
  const components = a[UPGRADE_COMPONENTS];
  return {
    clusterVersion: obj.spec?.kubernetesClusterVersion ?? '',
    componentsReference: obj.spec?.kubernetesComponentsReference ?? '',
    ...(from && to ? { inProgress: { from, to, ...(components ? { components } : {}) } } : {}),
  };
}

/** The components of the current ConfigMap. */
export async function readComponents(c: Clients, name: string): Promise<components.Component[]> {
  try {
    const cm = await c.core.readNamespacedConfigMap({ name, namespace: 'kube-system' });
    return decodeComponents(cm.data?.components ?? '[]');
  } catch (err) {
    throw fromApiError(err, `reading ConfigMap kube-system/${name}`);
  }
}

/**
 * The target's components: the row's files and images resolved against `artifactBase`, then the
 * images of `current` that are no row's (the project's service images, from the image overlay).
 */
export function targetComponents(target: VersionRow, current: readonly components.Component[], artifactBase: string, rows: readonly VersionRow[]): components.Component[] {
  const rowImagePaths = new Set(rows.flatMap((r) => wireComponents(r, artifactBase).map((c) => c.installPath)));
  const services = current.filter((c) => isImageInstallPath(c.installPath) && !rowImagePaths.has(c.installPath));
  return [...wireComponents(target, artifactBase), ...services];
}

/** Creates the ConfigMap (if missing) and marks the upgrade in progress with it; the spec stays (recordClusterVersion moves it). */
export async function recordTarget(c: Clients, from: string, target: string, list: components.Component[]): Promise<string> {
  const name = componentsConfigMapName(list);
  try {
    await c.core.createNamespacedConfigMap({ namespace: 'kube-system', body: { metadata: { name, namespace: 'kube-system' }, immutable: true, data: { components: encodeComponents(list), 'cluster-version': target } } });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw fromApiError(err, `creating ConfigMap kube-system/${name}`);
  }
  await patchNodeVersion(c, { metadata: { annotations: { [UPGRADE_FROM]: from, [UPGRADE_TO]: target, [UPGRADE_COMPONENTS]: name } } });
  return name;
}

/** Points the NodeVersion's spec at the target (the first control plane runs it): joining nodes install it from now on. */
export async function recordClusterVersion(c: Clients, target: string, componentsName: string): Promise<void> {
  await patchNodeVersion(c, { spec: { kubernetesClusterVersion: target, kubernetesComponentsReference: componentsName } });
}

/** Removes the in-progress annotations: the last node is done, or the first control plane's step failed and was restored. */
export async function recordFinished(c: Clients): Promise<void> {
  await patchNodeVersion(c, { metadata: { annotations: { [UPGRADE_FROM]: null, [UPGRADE_TO]: null, [UPGRADE_COMPONENTS]: null } } });
}

async function patchNodeVersion(c: Clients, body: object): Promise<void> {
  try {
    await c.custom.patchClusterCustomObject({ group: UPDATE_GROUP, version: UPDATE_VERSION, plural: 'nodeversions', name: NODE_VERSION_NAME, body }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
  } catch (err) {
    throw fromApiError(err, `updating NodeVersion ${NODE_VERSION_NAME}`);
  }
}
