/**
 * The check of down-lost-network.int.spec.ts, run in a child process under the cluster lock:
 * stand-in namespaces of "the winning cluster" (kept when a real one exists), a state of a
 * cluster that never claimed the network with the same planned names, `down`, then every
 * stand-in must still exist.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeState, type ClusterState } from '../cluster.js';
import { ClusterLayout } from '../layout.js';
import { NETWORK, nodeAddress } from './network.js';
import { downReal } from './real-cluster.js';

const PLANNED = ['control-plane-0', 'worker-0'];
/** The winner's namespaces the losing cluster's state would name. */
export const STAND_INS = [...PLANNED.map((n, i) => nodeAddress(n, i).namespace), NETWORK.routerNamespace];

const namespaces = () => execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).split('\n').map((l) => l.split(' ')[0]!).filter(Boolean);

/** Creates the missing stand-ins, runs `down` on the losing cluster's folder, removes what it created. */
export async function checkDownLeavesWinnersNetwork(): Promise<string> {
  const planned = PLANNED;
  const standIns = STAND_INS;
  const created = standIns.filter((ns) => !namespaces().includes(ns));
  for (const ns of created) execFileSync('ip', ['netns', 'add', ns]);
  try {
    const root = mkdtempSync(join(tmpdir(), 'asterism-lost-'));
    const layout = new ClusterLayout(root);
    mkdirSync(layout.workspace, { recursive: true });
    const state: ClusterState = { created: new Date().toISOString(), binDir: '', backend: 'kubeadm', nodes: [], planned, networkClaimed: false, forwards: [], kubernetesVersion: 'v1.35.4' };
    await writeState(layout, state);
    await downReal(root);
    const left = namespaces();
    const kept = standIns.filter((ns) => left.includes(ns));
    assert.deepEqual(kept, standIns, 'the other cluster\'s namespaces survive');
    assert.equal(existsSync(root), false);
    return `kept: ${kept.join(', ')}; folder removed`;
  } finally {
    for (const ns of created) spawnSync('ip', ['netns', 'del', ns]);
  }
}
