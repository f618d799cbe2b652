/**
 * Strict server-side validation of an object: a dry-run server-side apply with
 * `fieldValidation=Strict`, so the real kube-apiserver rejects unknown or duplicate fields too
 * (a plain create only warns about them), on top of its schema and admission checks.
 */
import { request } from 'node:https';
import type { K8sObject } from './helm.js';

/** Resource plurals of the kinds the charts render. */
const PLURALS: Record<string, string> = {
  ServiceAccount: 'serviceaccounts',
  Secret: 'secrets',
  ConfigMap: 'configmaps',
  Service: 'services',
  DaemonSet: 'daemonsets',
  Deployment: 'deployments',
  NetworkPolicy: 'networkpolicies',
  Role: 'roles',
  RoleBinding: 'rolebindings',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  CustomResourceDefinition: 'customresourcedefinitions',
};
const CLUSTER_SCOPED = new Set(['ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition']);

/** REST path of an object. */
export function objectPath(obj: K8sObject, defaultNamespace: string): string {
  const plural = PLURALS[obj.kind];
  if (!plural) throw new Error(`no REST mapping for kind ${obj.kind}`);
  const base = obj.apiVersion.includes('/') ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
  const ns = CLUSTER_SCOPED.has(obj.kind) ? '' : `/namespaces/${obj.metadata.namespace ?? defaultNamespace}`;
  return `${base}${ns}/${plural}/${obj.metadata.name}`;
}

export interface AdminAccess {
  server: string;
  caPem: string;
  certPem: string;
  keyPem: string;
}

/** Dry-run server-side apply with strict field validation; resolves status code and body. */
export function strictDryRunApply(access: AdminAccess, obj: K8sObject, defaultNamespace = 'kube-system'): Promise<{ status: number; body: string }> {
  const url = new URL(`${access.server}${objectPath(obj, defaultNamespace)}`);
  url.search = new URLSearchParams({ dryRun: 'All', fieldManager: 'asterism-chart-test', fieldValidation: 'Strict', force: 'true' }).toString();
  const body = JSON.stringify(obj);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'PATCH',
        ca: access.caPem,
        cert: access.certPem,
        key: access.keyPem,
        timeout: 15_000,
        headers: { 'content-type': 'application/apply-patch+yaml', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`dry-run apply of ${obj.kind} ${obj.metadata.name} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}
