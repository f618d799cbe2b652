/**
 * Fault scenarios of the kubeadm backend (docs/adr/0019-node-runtime.md), exported for tests:
 * a node reboot (every process of the node killed, its /run emptied as a tmpfs would be except the
 * state folder, vTPM reset, measured boot again, the node started again -> rejoin) and a node
 * added later (optionally with a tampered measured boot, which must be refused).
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_IMAGE_DIR, type ImageManifest } from '@asterism/deploy';
import { readState, writeState } from '../cluster.js';
import { ClusterLayout, type NodeSpec } from '../layout.js';
import { resetTpm } from '../machine.js';
import { measureBoot } from '../measured-boot.js';
import { bootEventsOf } from './image-measurements.js';
import { writeMetadataFile } from '../metadata-file.js';
import { destroyNodeCgroups } from './cgroups.js';
import { LocalNetwork, nodeAddress } from './network.js';
import { bootRealNode, startNodeSupervisor } from './real-cluster.js';
import { K8S_VERSION } from '@asterism/k8s-testenv';

/** The images `up` built (a fault must not rebuild them while a node joins). */
/** The images `up` built for the cluster's version (the pinned version's in the default folder). */
async function builtImages(version: string | undefined): Promise<ImageManifest> {
  const dir = !version || version === K8S_VERSION ? DEFAULT_IMAGE_DIR : join(DEFAULT_IMAGE_DIR, version);
  return JSON.parse(await readFile(join(dir, 'images.json'), 'utf8')) as ImageManifest;
}

async function loadCluster(root: string) {
  const layout = new ClusterLayout(root);
  const state = await readState(layout);
  if (!state || state.backend !== 'kubeadm') throw new Error(`no kubeadm-backend cluster in ${root}`);
  return { layout, state };
}

/** Reboots a real node; its bootstrapper then rejoins (IssueRejoinTicket). */
export async function rebootRealNode(root: string, name: string): Promise<void> {
  await rebootRealNodes(root, [name]);
}

/**
 * Reboots several real nodes together: every one is powered off (all its processes killed, /run
 * emptied) before the first is powered on again, as in a full control-plane outage. Each then
 * rejoins, or waits for `asterism recover` when no joinservice is left (docs/protocol/recovery.md).
 */
export async function rebootRealNodes(root: string, names: string[]): Promise<void> {
  const { layout, state } = await loadCluster(root);
  const nodes = names.map((name) => {
    const index = state.nodes.findIndex((n) => n.name === name);
    if (index < 0) throw new Error(`no node ${name} in ${root}`);
    return { node: state.nodes[index]!, index };
  });
  for (const { node } of nodes) await powerOff(layout, node.name);
  const images = await builtImages(state.kubernetesVersion);
  for (const { node, index } of nodes) {
    await resetTpm(layout, node.name);
    await measureBoot(layout.tpmSocket(node.name), { tamper: node.tampered ?? false, ...(await bootEventsOf(layout)) });
    node.bootstrapper = await startNodeSupervisor(layout, node, index, images);
  }
  await writeState(layout, state);
}

/** Powers a real node off and leaves it off (every process killed, /run emptied); `restartRealNode` starts it again. */
export async function powerOffRealNode(root: string, name: string): Promise<void> {
  const { layout, state } = await loadCluster(root);
  if (!state.nodes.some((n) => n.name === name)) throw new Error(`no node ${name} in ${root}`);
  await powerOff(layout, name);
}

/**
 * Starts a node's processes again (after `powerOffRealNode`) with its vTPM as it is: no reset and
 * no new measured boot, so no second non-orderly TPM start-up (swtpm's dictionary-attack counter
 * locks the vTPM after three). Its bootstrapper then rejoins.
 */
export async function restartRealNode(root: string, name: string): Promise<void> {
  const { layout, state } = await loadCluster(root);
  const index = state.nodes.findIndex((n) => n.name === name);
  if (index < 0) throw new Error(`no node ${name} in ${root}`);
  await powerOff(layout, name);
  const node = state.nodes[index]!;
  node.bootstrapper = await startNodeSupervisor(layout, node, index, await builtImages(state.kubernetesVersion));
  await writeState(layout, state);
}

/** Kills every process of the node; /run is emptied as a tmpfs would be, except /run/state (the state disk). */
async function powerOff(layout: ClusterLayout, name: string): Promise<void> {
  await destroyNodeCgroups(name);
  const run = join(layout.nodeRoot(name), 'run');
  for (const entry of await readdir(run)) if (entry !== 'state') await rm(join(run, entry), { recursive: true, force: true });
}

/** Adds a worker to a running real cluster (its own namespace, vTPM, disk, supervisor). */
export async function addRealNode(root: string, name: string, opts: { tamper?: boolean } = {}): Promise<NodeSpec> {
  const { layout, state } = await loadCluster(root);
  const index = state.nodes.length;
  const address = nodeAddress(name, index);
  const node: NodeSpec = { name, role: 'Worker', ip: address.ip };
  const metadata = JSON.parse(await readFile(layout.metadataFile, 'utf8')) as { initSecretHash: string };
  await writeMetadataFile(layout.metadataFile, [...state.nodes, node], metadata.initSecretHash);
  await new LocalNetwork().addNode(address);
  const images = await builtImages(state.kubernetesVersion);
  state.nodes.push(await bootRealNode(layout, node, index, images, opts.tamper ?? false));
  await writeState(layout, state);
  return node;
}

