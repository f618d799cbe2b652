/**
 * Offline validation of rendered objects against the Kubernetes OpenAPI schemas bundled in
 * kubernetes-models (types, required fields, enums). It does not flag unknown fields; the install
 * test covers those with a strict server-side dry run against the real kube-apiserver.
 */
import type { K8sObject } from './helm.js';

interface Model {
  validate(): void;
}
type ModelClass = new (data: unknown) => Model;

/** Validates one object; throws naming the object and the schema violation. */
export async function validateWithModels(obj: K8sObject): Promise<void> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(`kubernetes-models/${obj.apiVersion}`)) as Record<string, unknown>;
  } catch {
    throw new Error(`no kubernetes-models schema for apiVersion ${obj.apiVersion}`);
  }
  const Cls = mod[obj.kind] as ModelClass | undefined;
  if (typeof Cls !== 'function') throw new Error(`no kubernetes-models schema for ${obj.apiVersion} ${obj.kind}`);
  try {
    new Cls(obj).validate();
  } catch (err) {
    throw new Error(`${obj.kind} ${obj.metadata?.name}: ${(err as Error).message}`, { cause: err });
  }
}
