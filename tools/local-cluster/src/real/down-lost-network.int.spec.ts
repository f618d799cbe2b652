/**
 * `down` of a cluster whose `up` lost the machine's network to another `up` (two at once): its
 * state names the same planned nodes as the winner's, and those namespaces are the winner's, so
 * `down` removes its folder and nothing else. Real network namespaces (holding the machine's
 * cluster lock, as every user of them does; docs/adr/0039-vm-nodes-local-cluster.md).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { missingComponent } from '@asterism/testing';
import { STAND_INS } from './down-lost-network.check.js';

const canNetns = spawnSync('ip', ['netns', 'list']).status === 0 && process.getuid?.() === 0;
const skip = canNetns ? false : missingComponent('root with iproute2 (ip netns)', 'run as root on Linux');

describe('local cluster down after an up that lost the network', { skip }, () => {
  it('removes its folder but leaves the winning cluster\'s node namespaces and router alone', async () => {
    // The machine's lock: no other user of the cluster namespaces runs while the stand-ins exist.
    const lock = spawnSync('flock', ['-w', '1800', '/tmp/asterism-cluster.lock', process.execPath, '--import', 'tsx', join(import.meta.dirname, 'down-lost-network.run.ts')], { encoding: 'utf8', cwd: join(import.meta.dirname, '..', '..', '..', '..'), timeout: 1_900_000 });
    assert.equal(lock.status, 0, `${lock.stdout}\n${lock.stderr}`);
    assert.ok(lock.stdout.includes(`kept: ${STAND_INS.join(', ')}; folder removed`), lock.stdout);
  });
});

