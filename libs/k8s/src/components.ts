import { createHash } from 'node:crypto';
import type { components } from '@asterism/proto';
import { K8sError } from './errors.js';

/** Go-JSON of a component list as stored in `k8s-components-*` ConfigMaps (omitempty keys). */
export function encodeComponents(list: components.Component[]): string {
  return JSON.stringify(
    list.map((c) => ({
      ...(c.url ? { url: c.url } : {}),
      ...(c.hash ? { hash: c.hash } : {}),
      ...(c.installPath ? { install_path: c.installPath } : {}),
      ...(c.extract ? { extract: true } : {}),
    })),
  );
}

/**
 * Decodes a component list, accepting the legacy form `{"URL","Hash","InstallPath","Extract"}`:
 * per element a non-empty new-style value wins, else the legacy value (TestUnmarshalComponents).
 */
export function decodeComponents(json: string): components.Component[] {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    throw new K8sError('K8S_INVALID', `components are not JSON: ${(err as Error).message}`);
  }
  if (raw === null) return [];
  if (!Array.isArray(raw)) throw new K8sError('K8S_INVALID', 'components must be a JSON list');
  return raw.map((e, i) => {
    if (!e || typeof e !== 'object') throw new K8sError('K8S_INVALID', `components[${i}] is not an object`);
    const o = e as Record<string, unknown>;
    const str = (n: string, legacy: string) => {
      const v = o[n] || o[legacy];
      if (v !== undefined && v !== null && typeof v !== 'string') throw new K8sError('K8S_INVALID', `components[${i}].${n} must be a string`);
      return (v as string | undefined) ?? '';
    };
    const extract = o.extract ?? o.Extract ?? false;
    if (typeof extract !== 'boolean') throw new K8sError('K8S_INVALID', `components[${i}].extract must be a boolean`);
    return { url: str('url', 'URL'), hash: str('hash', 'Hash'), installPath: str('install_path', 'InstallPath'), extract: extract || o.Extract === true };
  });
}

/** `sha256:<hex(SHA256(hash_1 || hash_2 || ...))>` over the components' hash strings. */
export function componentsHash(list: components.Component[]): string {
  const h = createHash('sha256');
  for (const c of list) h.update(c.hash, 'utf8');
  return `sha256:${h.digest('hex')}`;
}

/** Name of the ConfigMap holding a component list: `k8s-components-sha256-<hex>`. */
export function componentsConfigMapName(list: components.Component[]): string {
  return `k8s-components-${componentsHash(list).replace(':', '-')}`;
}
