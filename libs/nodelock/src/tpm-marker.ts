import { TPM_ALG, type TpmClient } from '@asterism/tpm';
import { isMarkedValue, type NodeMarker } from './node-lock.js';

/** The PCR the reference extends with the cluster ID (docs/protocol/node-lock.md). */
export const CLUSTER_ID_PCR = 15;

/**
 * Marks a TPM node as bootstrapped (docs/protocol/node-lock.md): TPM2_PCR_Event on PCR 15 with the cluster ID as
 * event data, which extends every active bank with H_bank(clusterID), so the SHA-256 bank becomes
 * SHA256(PCR15 || SHA256(clusterID)). Only a reboot resets it.
 */
export class TpmNodeMarker implements NodeMarker {
  constructor(private readonly openTpm: () => Promise<TpmClient>) {}

  async markNodeAsBootstrapped(clusterId: Uint8Array): Promise<void> {
    await (await this.openTpm()).pcrEvent(CLUSTER_ID_PCR, clusterId);
  }
}

/** The SHA-256 PCR 15 value (the cluster-ID register of a TPM node). */
export async function readClusterIdPcr(tpm: TpmClient): Promise<Buffer> {
  const value = (await tpm.pcrRead([CLUSTER_ID_PCR], TPM_ALG.SHA256)).get(CLUSTER_ID_PCR);
  if (!value || value.length === 0) throw new Error('the TPM has no SHA-256 PCR 15');
  return Buffer.from(value);
}

/** Whether the node is marked: its SHA-256 PCR 15 is not all zero (`IsNodeBootstrapped`). */
export async function isNodeBootstrapped(tpm: TpmClient): Promise<boolean> {
  return isMarkedValue(await readClusterIdPcr(tpm));
}
