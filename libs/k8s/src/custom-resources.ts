import * as k8s from '@kubernetes/client-node';
import { fromApiError, K8sError } from './errors.js';
import { k8sCompliantHostname } from './node-name.js';

/** API group of the reference's update operator CRDs. */
export const UPDATE_GROUP = 'update.edgeless.systems';
export const UPDATE_VERSION = 'v1alpha1';
/** Name of the cluster-scoped NodeVersion object. */
export const NODE_VERSION_NAME = 'constellation-version';
/** JoiningNode deadline: workers may take 48 h, a control plane 10 min (docs/protocol/join-ticket.md). */
export const WORKER_JOIN_DEADLINE_MS = 48 * 3600 * 1000;
export const CONTROL_PLANE_JOIN_DEADLINE_MS = 10 * 60 * 1000;
/** Field manager used for server-side apply of JoiningNodes. */
export const JOIN_FIELD_MANAGER = 'join-service';

/** Reads `spec.kubernetesComponentsReference` of the NodeVersion `constellation-version`. */
export class NodeVersionReader {
  constructor(private readonly custom: k8s.CustomObjectsApi) {}

  async componentsReference(): Promise<string> {
    let obj: { spec?: { kubernetesComponentsReference?: unknown } };
    try {
      obj = (await this.custom.getClusterCustomObject({ group: UPDATE_GROUP, version: UPDATE_VERSION, plural: 'nodeversions', name: NODE_VERSION_NAME })) as typeof obj;
    } catch (err) {
      throw fromApiError(err, `getting NodeVersion ${NODE_VERSION_NAME}`);
    }
    const ref = obj?.spec?.kubernetesComponentsReference;
    if (typeof ref !== 'string' || ref === '') {
      throw new K8sError('K8S_NOT_FOUND', 'kubernetesComponentsReference not found in node version');
    }
    return ref;
  }
}

/** What the joinservice records about a node while it joins. */
export interface JoiningNodeSpec {
  nodeName: string;
  componentsReference: string;
  isControlPlane: boolean;
}

/**
 * Writes JoiningNode objects (docs/protocol/join-ticket.md). Workers are server-side applied (idempotent);
 * control planes are created under the fixed name `control-plane`, so a second concurrent
 * control-plane join fails with CONTROL_PLANE_JOIN_IN_PROGRESS.
 */
export class JoiningNodeWriter {
  constructor(
    private readonly custom: k8s.CustomObjectsApi,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The object that would be written for `spec` (exposed for tests and dry runs). */
  build(spec: JoiningNodeSpec): Record<string, unknown> {
    const name = k8sCompliantHostname(spec.nodeName);
    const deadline = new Date(this.now().getTime() + (spec.isControlPlane ? CONTROL_PLANE_JOIN_DEADLINE_MS : WORKER_JOIN_DEADLINE_MS));
    return {
      apiVersion: `${UPDATE_GROUP}/${UPDATE_VERSION}`,
      kind: 'JoiningNode',
      metadata: { name: spec.isControlPlane ? 'control-plane' : name },
      spec: {
        name,
        componentsreference: spec.componentsReference,
        iscontrolplane: spec.isControlPlane,
        deadline: deadline.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      },
    };
  }

  async add(spec: JoiningNodeSpec): Promise<void> {
    const body = this.build(spec);
    const base = { group: UPDATE_GROUP, version: UPDATE_VERSION, plural: 'joiningnodes' };
    if (spec.isControlPlane) {
      try {
        await this.custom.createClusterCustomObject({ ...base, body });
      } catch (err) {
        const e = fromApiError(err, 'creating JoiningNode control-plane');
        if (e.code === 'K8S_ALREADY_EXISTS') {
          throw new K8sError('CONTROL_PLANE_JOIN_IN_PROGRESS', 'failed to create joining control-plane node, maybe another node is already joining', {
            cause: e,
          });
        }
        throw e;
      }
      return;
    }
    try {
      await this.custom.patchClusterCustomObject(
        { ...base, name: (body.metadata as { name: string }).name, body, fieldManager: JOIN_FIELD_MANAGER, force: true },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply),
      );
    } catch (err) {
      throw fromApiError(err, `applying JoiningNode ${(body.metadata as { name: string }).name}`);
    }
  }
}
