/**
 * How the cluster commands (`nodes`, `node`, `config check|apply`) reach the cluster: the admin
 * kubeconfig `init` wrote (`--kubeconfig`, else $KUBECONFIG, else ./asterism-admin.conf), and the
 * cluster ID of asterism-id.json for the mark check.
 */
import { readFile } from 'node:fs/promises';
import { clientsFromKubeconfigFile, type KubeClients } from '@asterism/k8s';
import { UsageError } from '../usage.js';
import { parseClusterId } from '../verify/running-node.js';

/** Flags every cluster command takes. */
export const CLUSTER_FLAG_OPTIONS = {
  kubeconfig: { type: 'string' },
  workspace: { type: 'string' },
} as const;

/** Usage lines of {@link CLUSTER_FLAG_OPTIONS}. */
export const CLUSTER_FLAGS_USAGE = `  --kubeconfig <file>           admin kubeconfig (default $KUBECONFIG, else <workspace>/asterism-admin.conf)
  --workspace <dir>             where init wrote its files (default .)`;

/** Admin clients for the cluster. */
export function clusterClients(values: { kubeconfig?: string | undefined; workspace?: string | undefined }, env: NodeJS.ProcessEnv = process.env): KubeClients {
  const path = values.kubeconfig ?? env.KUBECONFIG ?? `${values.workspace ?? '.'}/asterism-admin.conf`;
  return clientsFromKubeconfigFile(path);
}

/** The cluster ID: `--cluster-id`, else asterism-id.json's `clusterID` in the workspace. */
export async function clusterIdOf(values: { 'cluster-id'?: string | undefined; workspace?: string | undefined }): Promise<Buffer> {
  if (values['cluster-id']) return parseClusterId(values['cluster-id']);
  const path = `${values.workspace ?? '.'}/asterism-id.json`;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new UsageError(`the cluster ID is needed to check the nodes' mark: pass --cluster-id or run in the workspace with ${path}`);
  }
  const id = (JSON.parse(text) as { clusterID?: unknown }).clusterID;
  if (typeof id !== 'string') throw new UsageError(`${path} has no clusterID`);
  return parseClusterId(id);
}
