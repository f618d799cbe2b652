/**
 * Quarantine and readmission of a node (docs/adr/0037-continuous-attestation.md): the NoExecute
 * taint evicts its pods and keeps new ones off; the deny list stops its disk and attestation key
 * from getting a join or rejoin ticket; an Event says why. Used by the monitor and by
 * `asterism node quarantine|readmit`.
 */
import type * as k8s from '@kubernetes/client-node';
import { BINDING_NAMESPACE, BINDING_PREFIX, fromApiError } from '@asterism/k8s';
import type { DenyEntry, DenyListStore } from './deny-list.js';
import type { EvidenceSummary } from './evidence.js';
import type { NodeStatusWriter, NodeView } from './node-status.js';

/** The identifiers a node is deny-listed by. */
export interface NodeIdentifiers {
  /** Disk UUIDs bound to the node (identity bindings, docs/adr/0008). */
  diskUuids: string[];
  /** Its attestation key digest (`sha256:<hex>`), when its variant has one. */
  akDigest: string | undefined;
}

/** Finds the disk UUIDs bound to a node name. */
export class BoundDisks {
  constructor(private readonly core: k8s.CoreV1Api) {}

  async of(node: string): Promise<string[]> {
    let items: k8s.V1ConfigMap[];
    try {
      items = (await this.core.listNamespacedConfigMap({ namespace: BINDING_NAMESPACE })).items;
    } catch (err) {
      throw fromApiError(err, `listing identity bindings in ${BINDING_NAMESPACE}`);
    }
    return items
      .filter((cm) => cm.metadata?.name?.startsWith(BINDING_PREFIX) && cm.data?.nodeName === node)
      .map((cm) => (cm.data?.diskUuid ?? cm.metadata!.name!.slice(BINDING_PREFIX.length)).toLowerCase())
      .sort();
  }
}

/** Taint + deny list + Event, and their removal. */
export class Quarantine {
  constructor(
    private readonly status: NodeStatusWriter,
    private readonly denyList: DenyListStore,
    private readonly disks: BoundDisks,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The identifiers of a node from its bindings and (latest) evidence; `none:` digests deny nothing. */
  async identifiers(node: string, evidence: EvidenceSummary | undefined): Promise<NodeIdentifiers> {
    const ak = evidence?.akDigest;
    return { diskUuids: await this.disks.of(node), akDigest: ak && ak.startsWith('sha256:') ? ak : undefined };
  }

  /** Quarantines `node`: deny list first (a rejoin must fail from now on), then the taint, then the Event. */
  async quarantine(node: NodeView, reason: string, message: string, evidence = node.evidence): Promise<DenyEntry[]> {
    const ids = await this.identifiers(node.name, evidence);
    const since = this.now().toISOString();
    const entries: DenyEntry[] = [
      ...ids.diskUuids.map((id) => ({ kind: 'disk' as const, id, node: node.name, reason: `${reason}: ${message}`.slice(0, 500), since })),
      ...(ids.akDigest ? [{ kind: 'ak' as const, id: ids.akDigest, node: node.name, reason: `${reason}: ${message}`.slice(0, 500), since }] : []),
    ];
    await this.denyList.add(entries);
    await this.status.setQuarantineTaint(node.name, true, reason);
    const what = entries.map((e) => `${e.kind} ${e.id}`).join(', ') || 'no disk or attestation key known';
    await this.status.event(node, 'Warning', 'AttestationQuarantined', `quarantined (${reason}): ${message}; deny-listed: ${what}`);
    return entries;
  }

  /** Lifts the quarantine of `node`: deny-list entries, taint, Event. The caller checked a passing attestation first. */
  async readmit(node: NodeView, why: string): Promise<number> {
    const removed = await this.denyList.removeNode(node.name);
    await this.status.setQuarantineTaint(node.name, false, '');
    await this.status.event(node, 'Normal', 'AttestationReadmitted', `readmitted: ${why}; ${removed} deny-list entries removed`);
    return removed;
  }
}
