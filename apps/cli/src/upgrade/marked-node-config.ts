/**
 * The attestation config a running node must satisfy (docs/adr/0042-upgrade-agent.md): the
 * user's config expects the cluster-ID register unmarked (zero, as a fresh node is for init);
 * a node of the cluster carries the mark of its cluster ID there (PCR 15 on vTPM variants, RTMR2
 * on qemu-tdx; docs/protocol/node-lock.md). Every other measurement stays as the user gave it.
 */
import { Measurements, TDX_INDEX_CLUSTER_ID, variantDescriptor, type AttestationConfig } from '@asterism/attestation';
import { CLUSTER_ID_PCR, clusterIdPcr, clusterIdRtmr } from '../verify/running-node.js';

/** `att` with the cluster-ID register expecting the mark of `clusterId` (enforced). */
export function markedNodeConfig<T extends AttestationConfig>(att: T, clusterId: Buffer): T {
  const tdx = variantDescriptor(att.variant).platform === 'tdx';
  const measurements = new Measurements(att.measurements);
  measurements.set(tdx ? TDX_INDEX_CLUSTER_ID : CLUSTER_ID_PCR, { expected: tdx ? clusterIdRtmr(clusterId) : clusterIdPcr(clusterId), validationOpt: 'Enforce' });
  return { ...att, measurements };
}
