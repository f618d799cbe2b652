import type * as k8s from '@kubernetes/client-node';
import { fromApiError, K8sError } from './errors.js';

/** Reads and writes ConfigMaps; "not found" is a value (null), not an exception. */
export class ConfigMapStore {
  constructor(private readonly core: k8s.CoreV1Api) {}

  /** The ConfigMap, or null when it does not exist. */
  async get(namespace: string, name: string): Promise<k8s.V1ConfigMap | null> {
    try {
      return await this.core.readNamespacedConfigMap({ namespace, name });
    } catch (err) {
      const e = fromApiError(err, `reading ConfigMap ${namespace}/${name}`);
      if (e.code === 'K8S_NOT_FOUND') return null;
      throw e;
    }
  }

  /** One data key, or null when the ConfigMap or key is missing. */
  async getKey(namespace: string, name: string, key: string): Promise<string | null> {
    const cm = await this.get(namespace, name);
    return cm?.data?.[key] ?? null;
  }

  /** Creates a ConfigMap (K8S_ALREADY_EXISTS when it exists). */
  async create(namespace: string, name: string, data: Record<string, string>, options: { immutable?: boolean } = {}): Promise<void> {
    try {
      await this.core.createNamespacedConfigMap({
        namespace,
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data, ...(options.immutable ? { immutable: true } : {}) },
      });
    } catch (err) {
      throw fromApiError(err, `creating ConfigMap ${namespace}/${name}`);
    }
  }

  /** Read-modify-write of some keys with optimistic concurrency, retried on conflicts. */
  async updateKeys(namespace: string, name: string, data: Record<string, string>, attempts = 5): Promise<void> {
    for (let i = 1; ; i++) {
      const cm = await this.get(namespace, name);
      if (!cm) throw new K8sError('K8S_NOT_FOUND', `updating ConfigMap ${namespace}/${name}: not found`);
      cm.data = { ...(cm.data ?? {}), ...data };
      try {
        await this.core.replaceNamespacedConfigMap({ namespace, name, body: cm });
        return;
      } catch (err) {
        const e = fromApiError(err, `updating ConfigMap ${namespace}/${name}`);
        if (e.code !== 'K8S_CONFLICT' || i >= attempts) throw e;
      }
    }
  }
}
