/**
 * `load-image <archive>`: imports a user's OCI (or docker) image archive into the containerd of
 * every running real node, so pods can use it without a registry (docs/adr/0018). CRI looks images
 * up by their fully qualified name: an image named `localhost/<name>:<tag>` in the archive is used
 * as `image: localhost/<name>:<tag>` with `imagePullPolicy: IfNotPresent` (or Never).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readState } from '../cluster.js';
import { ClusterLayout } from '../layout.js';

const run = promisify(execFile);

/** The containerd socket of a real node, reachable from the host (the node's /run is a folder of its root). */
export function nodeContainerdSocket(layout: ClusterLayout, node: string): string {
  return join(layout.nodeRoot(node), 'run', 'containerd', 'containerd.sock');
}

/** Imports `archive` on every node; returns the image names each node now has from it. */
export async function loadImageOnNodes(root: string, archive: string, say: (l: string) => void): Promise<string[]> {
  const layout = new ClusterLayout(root);
  const state = await readState(layout);
  if (!state || state.backend !== 'kubeadm') throw new Error(`no kubeadm-backend cluster in ${root}`);
  let names: string[] = [];
  for (const n of state.nodes) {
    const { stdout } = await run('ctr', ['--address', nodeContainerdSocket(layout, n.name), '-n', 'k8s.io', 'images', 'import', '--all-platforms', archive], { timeout: 300_000 });
    names = [...stdout.matchAll(/^unpacking (\S+) \(/gm)].map((m) => m[1]!);
    say(`${n.name}: imported ${names.join(', ') || '(no named image in the archive)'}`);
  }
  return names;
}

/** The image names on the first node (what pods can name), without digest-only entries. */
export async function imagesOnNodes(root: string): Promise<string[]> {
  const layout = new ClusterLayout(root);
  const state = await readState(layout);
  if (!state || state.backend !== 'kubeadm' || state.nodes.length === 0) throw new Error(`no kubeadm-backend cluster in ${root}`);
  const { stdout } = await run('ctr', ['--address', nodeContainerdSocket(layout, state.nodes[0]!.name), '-n', 'k8s.io', 'images', 'ls', '-q'], { timeout: 60_000 });
  return stdout.split('\n').filter((l) => l && !l.startsWith('sha256:'));
}
