import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import bcrypt from 'bcryptjs';
import { StaticFileMetadata } from '@asterism/metadata';
import { alive, startDetached, stopDetached } from './detached.js';
import { newInitSecret } from './init-secret.js';
import { ClusterLayout, planNodes } from './layout.js';
import { writeMetadataFile } from './metadata-file.js';

describe('local cluster building blocks', () => {
  it('plans control planes first, each node on its own loopback address', () => {
    const nodes = planNodes(1, 2);
    assert.deepEqual(nodes.map((n) => `${n.name} ${n.role} ${n.ip}`), ['control-plane-0 ControlPlane 127.42.0.10', 'worker-0 Worker 127.42.0.11', 'worker-1 Worker 127.42.0.12']);
  });

  it('writes a metadata file the nodes StaticFileMetadata reads, with the first control plane as load balancer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lc-'));
    const layout = new ClusterLayout(dir);
    await writeMetadataFile(layout.metadataFile, planNodes(1, 1), '$2a$10$hash');
    assert.equal(statSync(layout.metadataFile).mode & 0o777, 0o600);
    const md = new StaticFileMetadata(layout.metadataFile, 'worker-0');
    assert.equal((await md.self()).VPCIP, '127.42.0.11');
    assert.deepEqual(await md.getLoadBalancerEndpoint(), { host: '127.42.0.10', port: '6443' });
    assert.equal(await md.initSecretHash(), '$2a$10$hash');
    assert.equal(JSON.parse(readFileSync(layout.metadataFile, 'utf8')).instances.length, 2);
  });

  it('init secrets use the reference alphabet and verify against their bcrypt hash', async () => {
    const { secret, hash } = await newInitSecret();
    assert.match(secret, /^[A-Za-z0-9_%@]{32}$/);
    assert.ok(await bcrypt.compare(secret, hash));
    assert.ok(!(await bcrypt.compare(`${secret}x`, hash)));
  });

  it('detached processes are stopped with their whole process group', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lc-'));
    // A shell that starts a grandchild: both must be gone after stopDetached.
    const p = startDetached('sleeper', 'sh', ['-c', 'sleep 60 & echo $! > child.pid; wait'], join(dir, 'log'), { cwd: dir });
    let childPid = 0;
    for (let i = 0; i < 100 && !childPid; i++) {
      await new Promise((r) => setTimeout(r, 20));
      try {
        childPid = Number(readFileSync(join(dir, 'child.pid'), 'utf8'));
      } catch {
        /* not yet */
      }
    }
    assert.ok(alive(p.pid) && alive(childPid));
    await stopDetached(p.pid, 2000);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(alive(p.pid), false);
    assert.equal(alive(childPid), false, 'the grandchild died with its group');
  });
});
