/** `join-config` as the cluster commands read and change it (docs/protocol/continuous-attestation.md). */
import * as k8s from '@kubernetes/client-node';
import { fromApiError } from '@asterism/k8s';

/** Where init put it. */
export const JOIN_CONFIG = { namespace: 'kube-system', name: 'join-config' } as const;

/** The attestation config JSON the cluster enforces now. */
export async function currentAttestationConfig(core: k8s.CoreV1Api): Promise<{ json: string; mode: string }> {
  let cm: k8s.V1ConfigMap;
  try {
    cm = await core.readNamespacedConfigMap(JOIN_CONFIG);
  } catch (err) {
    throw fromApiError(err, `reading ConfigMap ${JOIN_CONFIG.namespace}/${JOIN_CONFIG.name}`);
  }
  return { json: cm.data?.attestationConfig ?? '', mode: cm.data?.attestationMode || 'enforce' };
}

/** Writes the new attestation config (and the mode, when given); the joinservice and the monitor pick it up. */
export async function writeAttestationConfig(core: k8s.CoreV1Api, json: string, mode: 'enforce' | 'warn' | undefined): Promise<void> {
  const data: Record<string, string> = { attestationConfig: json, ...(mode ? { attestationMode: mode } : {}) };
  try {
    await core.patchNamespacedConfigMap({ ...JOIN_CONFIG, body: { data } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
  } catch (err) {
    throw fromApiError(err, `updating ConfigMap ${JOIN_CONFIG.namespace}/${JOIN_CONFIG.name}`);
  }
}
