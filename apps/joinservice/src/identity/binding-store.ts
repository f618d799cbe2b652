import { isAsterismError } from '@asterism/errors';
import type { ConfigMapStore } from '@asterism/k8s';

/** Namespace of the binding ConfigMaps (the joinservice's own). */
export const BINDING_NAMESPACE = 'kube-system';
/** Prefix of the binding ConfigMaps; the rest is the lower-case disk UUID. */
export const BINDING_PREFIX = 'asterism-node-identity-';

/** The identity a disk UUID was bound to on its first join (docs/adr/0008). */
export interface IdentityBinding {
  diskUuid: string;
  akDigest: string;
  nodeName: string;
  role: 'ControlPlane' | 'Worker';
  createdAt: string;
}

/**
 * Disk-to-identity bindings as immutable ConfigMaps `kube-system/asterism-node-identity-<uuid>`:
 * created once (the apiserver refuses a second create with 409, and an update of an immutable
 * ConfigMap), never changed; an operator deletes one to let a re-created node claim the disk.
 * Case-insensitive in the UUID (one binding covers both spellings).
 */
export class ConfigMapIdentityBindings {
  constructor(private readonly configMaps: Pick<ConfigMapStore, 'get' | 'create'>) {}

  /** The binding of `diskUuid`, or undefined. */
  async get(diskUuid: string): Promise<IdentityBinding | undefined> {
    const cm = await this.configMaps.get(BINDING_NAMESPACE, nameOf(diskUuid));
    const d = cm?.data;
    if (!d) return undefined;
    return { diskUuid: d.diskUuid ?? diskUuid, akDigest: d.akDigest ?? '', nodeName: d.nodeName ?? '', role: d.role === 'ControlPlane' ? 'ControlPlane' : 'Worker', createdAt: d.createdAt ?? '' };
  }

  /** Creates the binding: `created`, or `exists` when another writer was first. */
  async create(b: IdentityBinding): Promise<'created' | 'exists'> {
    try {
      await this.configMaps.create(BINDING_NAMESPACE, nameOf(b.diskUuid), { diskUuid: b.diskUuid, akDigest: b.akDigest, nodeName: b.nodeName, role: b.role, createdAt: b.createdAt }, { immutable: true });
      return 'created';
    } catch (err) {
      if (isAsterismError(err, 'K8S_ALREADY_EXISTS')) return 'exists';
      throw err;
    }
  }
}

function nameOf(diskUuid: string): string {
  return `${BINDING_PREFIX}${diskUuid.toLowerCase()}`;
}
