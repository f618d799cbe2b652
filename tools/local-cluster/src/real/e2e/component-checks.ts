/**
 * Scenario: the nodes run only Kubernetes binaries their bootstrapper installed from hash-checked
 * artifacts (docs/protocol/components.md). Node roots get no binary from the host, so a kubelet
 * that registered is one the installer put in place.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { componentsForRole, versionRow } from '@asterism/versions';
import type { RealClusterContext } from './context.js';

/**
 * Every node's kubelet reports `version`; each installed binary in the node's root is a regular
 * file (no link to the host's build) hashing as the manifest says; the CNI plugins carry the
 * installer's record; the bootstrapper logged each verified artifact (init and joins alike). A
 * worker holds only its role's components (no kubectl: libs/versions node-roles.ts).
 */
export async function componentsInstalledFromArtifacts(ctx: RealClusterContext, nodes: string[], version: string): Promise<void> {
  const row = versionRow(version);
  for (const name of nodes) {
    const node = await ctx.core.readNode({ name });
    assert.equal(node.status?.nodeInfo?.kubeletVersion, version, `${name} kubelet version`);
    const worker = node.metadata?.labels?.['node-role.kubernetes.io/control-plane'] === undefined;
    const components = componentsForRole(row.components, worker ? 'Worker' : 'ControlPlane');
    if (worker) for (const c of row.components.filter((x) => !components.includes(x))) assert.throws(() => lstatSync(join(ctx.layout.nodeRoot(name), c.installPath)), `${name}: a worker has no ${c.name}`);
    for (const c of components.filter((x) => !x.extract)) {
      const path = join(ctx.layout.nodeRoot(name), c.installPath);
      assert.ok(lstatSync(path).isFile(), `${name}: ${c.installPath} is a regular file`);
      assert.equal(`sha256:${createHash('sha256').update(readFileSync(path)).digest('hex')}`, c.hash, `${name}: ${c.name} as the manifest says`);
    }
    const log = readFileSync(ctx.layout.log(name, 'bootstrapper.json'), 'utf8');
    for (const c of components) assert.match(log, new RegExp(`"component artifact fetched and verified".*"component":"${c.name}"|"component":"${c.name}".*"component artifact fetched and verified"`), `${name}: ${c.name} fetched and verified`);
  }
  ctx.log(`${nodes.length} nodes run kubelet ${version} installed from hash-checked artifacts`);
}
