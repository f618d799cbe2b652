import { isAsterismError } from '@asterism/errors';
import type { ConfigMapStore } from './configmaps.js';

/**
 * Namespace of the disk identity bindings (the joinservice's own; the bootstrapper writes the
 * first control plane's there at init). docs/adr/0008-attestation-bound-node-identity.md
 */
export const BINDING_NAMESPACE = 'kube-system';
/** Prefix of the binding ConfigMaps; the rest is the lower-case disk UUID. */
export const BINDING_PREFIX = 'asterism-node-identity-';

/** The identity a disk UUID is bound to: by its first join, or by `asterism init` for the first control plane. */
export interface IdentityBinding {
  diskUuid: string;
  /** `sha256:<hex>` of the attestation key (`attestationKeyDigest` of `@asterism/attestation`), or `none:<variant>`. */
  akDigest: string;
  nodeName: string;
  role: 'ControlPlane' | 'Worker';
  /** RFC 3339. */
  createdAt: string;
}

/** Name of the binding ConfigMap of `diskUuid` (any case: one binding covers both spellings). */
export function identityBindingName(diskUuid: string): string {
  return `${BINDING_PREFIX}${diskUuid.toLowerCase()}`;
}

/** The binding a binding ConfigMap's data holds (undefined without data). */
export function bindingFromData(d: Record<string, string> | undefined, diskUuid: string): IdentityBinding | undefined {
  if (!d) return undefined;
  return { diskUuid: d.diskUuid ?? diskUuid, akDigest: d.akDigest ?? '', nodeName: d.nodeName ?? '', role: d.role === 'ControlPlane' ? 'ControlPlane' : 'Worker', createdAt: d.createdAt ?? '' };
}

/**
 * Disk-to-identity bindings as immutable ConfigMaps `kube-system/asterism-node-identity-<uuid>`:
 * created once (the apiserver refuses a second create with 409, and an update of an immutable
 * ConfigMap), never changed; an operator deletes one to let a re-created node claim the disk.
 * Shared by the joinservice (checks and first-join bindings) and the bootstrapper (the init
 * node's own binding), so both write the same object.
 */
export class ConfigMapIdentityBindings {
  constructor(private readonly configMaps: Pick<ConfigMapStore, 'get' | 'create'>) {}

  /** The binding of `diskUuid`, or undefined. */
  async get(diskUuid: string): Promise<IdentityBinding | undefined> {
    return bindingFromData((await this.configMaps.get(BINDING_NAMESPACE, identityBindingName(diskUuid)))?.data, diskUuid);
  }

  /** Creates the binding: `created`, or `exists` when another writer was first. */
  async create(b: IdentityBinding): Promise<'created' | 'exists'> {
    try {
      await this.configMaps.create(BINDING_NAMESPACE, identityBindingName(b.diskUuid), { diskUuid: b.diskUuid, akDigest: b.akDigest, nodeName: b.nodeName, role: b.role, createdAt: b.createdAt }, { immutable: true });
      return 'created';
    } catch (err) {
      if (isAsterismError(err, 'K8S_ALREADY_EXISTS')) return 'exists';
      throw err;
    }
  }
}
