/**
 * Where a verdict shows in Kubernetes (docs/protocol/continuous-attestation.md): the Node condition
 * `AttestationVerified`, the evidence summary annotation, the quarantine taint and Events.
 */
import * as k8s from '@kubernetes/client-node';
import { fromApiError } from '@asterism/k8s';
import { isAsterismError } from '@asterism/errors';
import { parseSummary, type EvidenceSummary } from './evidence.js';
import type { Verdict } from './verdict.js';

/** The Node condition type. */
export const CONDITION_TYPE = 'AttestationVerified';
/** The NoExecute taint of a quarantined node. */
export const QUARANTINE_TAINT = 'asterism.dev/attestation';
/** Annotation holding the latest evidence summary (JSON). */
export const EVIDENCE_ANNOTATION = 'asterism.dev/attestation-evidence';
/** Event source component. */
export const EVENT_SOURCE = 'asterism-attestation-monitor';

/** A Node as the monitor and the CLI see it. */
export interface NodeView {
  name: string;
  uid: string;
  controlPlane: boolean;
  internalIp: string | undefined;
  quarantined: boolean;
  condition: k8s.V1NodeCondition | undefined;
  evidence: EvidenceSummary | undefined;
}

/** Reads the parts of a Node the monitor uses. */
export function nodeView(n: k8s.V1Node): NodeView {
  const labels = n.metadata?.labels ?? {};
  return {
    name: n.metadata?.name ?? '',
    uid: n.metadata?.uid ?? '',
    controlPlane: 'node-role.kubernetes.io/control-plane' in labels,
    internalIp: n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address,
    quarantined: (n.spec?.taints ?? []).some((t) => t.key === QUARANTINE_TAINT),
    condition: n.status?.conditions?.find((c) => c.type === CONDITION_TYPE),
    evidence: parseSummary(n.metadata?.annotations?.[EVIDENCE_ANNOTATION]),
  };
}

/** The condition a verdict sets; `lastTransitionTime` moves only when the status changes. */
export function conditionOf(v: Verdict, previous: k8s.V1NodeCondition | undefined): k8s.V1NodeCondition {
  const status = v.status === 'Verified' ? 'True' : 'False';
  const message = v.field ? `${v.field}: ${v.message}` : v.message;
  const transition = previous?.status === status && previous.lastTransitionTime ? previous.lastTransitionTime : v.at;
  return { type: CONDITION_TYPE, status, reason: v.reason, message: message.slice(0, 1000), lastHeartbeatTime: v.at, lastTransitionTime: transition };
}

/** Writes conditions, annotations, taints and Events through the API server. */
export class NodeStatusWriter {
  constructor(private readonly core: k8s.CoreV1Api) {}

  /** All nodes. */
  async list(): Promise<NodeView[]> {
    try {
      return (await this.core.listNode()).items.map(nodeView);
    } catch (err) {
      throw fromApiError(err, 'listing nodes');
    }
  }

  /** One node, or undefined. */
  async get(name: string): Promise<NodeView | undefined> {
    try {
      return nodeView(await this.core.readNode({ name }));
    } catch (err) {
      const e = fromApiError(err, `reading node ${name}`);
      if (e.code === 'K8S_NOT_FOUND') return undefined;
      throw e;
    }
  }

  /** Sets the `AttestationVerified` condition (strategic merge on the conditions list, keyed by type). */
  async setCondition(node: NodeView, v: Verdict): Promise<void> {
    const body = { status: { conditions: [conditionOf(v, node.condition)] } };
    try {
      await this.core.patchNodeStatus({ name: node.name, body }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch));
    } catch (err) {
      throw fromApiError(err, `setting condition ${CONDITION_TYPE} of node ${node.name}`);
    }
  }

  /** Stores the latest evidence summary on the Node. */
  async setEvidence(node: string, summary: EvidenceSummary): Promise<void> {
    const body = { metadata: { annotations: { [EVIDENCE_ANNOTATION]: JSON.stringify(summary) } } };
    try {
      await this.core.patchNode({ name: node, body }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    } catch (err) {
      throw fromApiError(err, `annotating node ${node}`);
    }
  }

  /** Adds (`on`) or removes the quarantine taint; returns whether anything changed. */
  async setQuarantineTaint(node: string, on: boolean, reason: string): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      let n: k8s.V1Node;
      try {
        n = await this.core.readNode({ name: node });
      } catch (err) {
        throw fromApiError(err, `reading node ${node}`);
      }
      const taints = n.spec?.taints ?? [];
      const has = taints.some((t) => t.key === QUARANTINE_TAINT);
      if (has === on) return false;
      const next = on ? [...taints, { key: QUARANTINE_TAINT, value: reason.slice(0, 63).replace(/[^A-Za-z0-9._-]/g, '-'), effect: 'NoExecute', timeAdded: new Date() }] : taints.filter((t) => t.key !== QUARANTINE_TAINT);
      try {
        // Replace with the read resourceVersion: the taint list has no merge key, a concurrent writer must not be overwritten.
        await this.core.replaceNode({ name: node, body: { ...n, spec: { ...n.spec, taints: next } } });
        return true;
      } catch (err) {
        const e = fromApiError(err, `${on ? 'tainting' : 'untainting'} node ${node}`);
        if (attempt < 5 && isAsterismError(e, 'K8S_CONFLICT')) continue;
        throw e;
      }
    }
  }

  /** Records an Event on the Node (in `default`, where node Events live). */
  async event(node: Pick<NodeView, 'name' | 'uid'>, type: 'Normal' | 'Warning', reason: string, message: string, at = new Date()): Promise<void> {
    const body: k8s.CoreV1Event = {
      metadata: { generateName: `${node.name}.attestation.`, namespace: 'default' },
      involvedObject: { kind: 'Node', name: node.name, uid: node.uid, apiVersion: 'v1' },
      reason,
      message: message.slice(0, 1000),
      type,
      source: { component: EVENT_SOURCE },
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
      reportingComponent: EVENT_SOURCE,
    };
    try {
      await this.core.createNamespacedEvent({ namespace: 'default', body });
    } catch (err) {
      throw fromApiError(err, `recording event ${reason} on node ${node.name}`);
    }
  }
}
