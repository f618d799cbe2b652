/**
 * The bootstrapper process started with the TDX variants: qemu-tdx reads its cluster-ID register
 * (RTMR2) from the TD's sysfs files under --state-root (a fake tdx_guest folder here), azure-tdx
 * reads PCR 15 of its vTPM (swtpm). The node condition they log decides init/join vs. bootstrapped.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { TDX_MEASUREMENTS_DIR } from '@asterism/nodelock';
import { missingComponent, startTsProcess, type ServiceProcess } from '@asterism/testing';
import { TPM_ALG } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT } from '@asterism/tpm/testing';

const swtpmSkip = swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT);
/** RTMR2 after marking with cluster ID 32×00 from a zero register: SHA384(48×00 || SHA384(clusterID)). */
const MARKED_RTMR2 = createHash('sha384').update(Buffer.concat([Buffer.alloc(48), createHash('sha384').update(Buffer.alloc(32)).digest()])).digest();

const roots: string[] = [];
/**
 * The bootstrapper's stages as a process that leaves the host alone: the local cluster's simulated
 * node (no kubeadm, no systemctl; docs/adr/0036-node-runtime.md). The issuers under test are the
 * bootstrapper's own.
 */
const SIMULATED_NODE = 'tools/simulated-node/src/main.ts';
const processes: ServiceProcess[] = [];
after(async () => {
  for (const p of processes) await p.stop();
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** A node root with a fake tdx_guest measurements folder (RTMR2 = `rtmr2`) unless `rtmr2` is undefined. */
function nodeRoot(rtmr2?: Buffer): string {
  const root = mkdtempSync(join(tmpdir(), 'bootstrapper-tdx-'));
  roots.push(root);
  if (rtmr2) {
    const dir = join(root, TDX_MEASUREMENTS_DIR);
    mkdirSync(dir, { recursive: true });
    for (const i of [0, 1, 3]) writeFileSync(join(dir, `rtmr${i}:sha384`), Buffer.alloc(48, i + 1));
    writeFileSync(join(dir, 'rtmr2:sha384'), rtmr2);
  }
  return root;
}

function start(variant: string, root: string, extra: string[] = []): ServiceProcess {
  const p = startTsProcess(SIMULATED_NODE, [
    `--attestation-variant=${variant}`,
    `--state-root=${root}`,
    `--metadata=file:${join(root, 'metadata.json')}`,
    '--node-name=tdx-node',
    '--k8s-backend=local',
    '--init-host=127.0.0.1',
    '--init-port=0',
    '--recovery-port=0',
    '--verify-grpc-port=0',
    '--verify-http-port=0',
    '-v=-1',
    ...extra,
  ]);
  processes.push(p);
  return p;
}

describe('bootstrapper process with the TDX variants', () => {
  const cases = [
    { name: 'qemu-tdx, RTMR2 zero: a fresh node (init.API and join)', rtmr2: Buffer.alloc(48), condition: 'fresh' },
    { name: 'qemu-tdx, RTMR2 marked with a cluster ID: already bootstrapped in this boot', rtmr2: MARKED_RTMR2, condition: 'bootstrapped' },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const p = start('qemu-tdx', nodeRoot(c.rtmr2));
      const line = await p.waitForLog((l) => l.msg === 'node condition' || l.msg === 'cannot determine node state', 60_000);
      assert.equal(line.condition, c.condition);
      await p.stop();
    });
  }

  it('qemu-tdx without the tdx_guest device cannot determine the node state (no PCR fallback)', async () => {
    const p = start('qemu-tdx', nodeRoot());
    const line = await p.waitForLog((l) => l.msg === 'node condition' || l.msg === 'cannot determine node state', 60_000);
    assert.equal(line.msg, 'cannot determine node state');
    assert.match(JSON.stringify(line.err), /rtmr2:sha384/);
    await p.stop();
  });

  it('azure-tdx reads PCR 15 of its vTPM: zero -> fresh, extended -> bootstrapped', { skip: swtpmSkip }, async () => {
    const tpm = await startSwtpm();
    try {
      await tpm.disconnect();
      const fresh = start('azure-tdx', nodeRoot(), [`--tpm=unix:${tpm.socketPath}`]);
      assert.equal((await fresh.waitForLog((l) => l.msg === 'node condition', 60_000)).condition, 'fresh');
      await fresh.stop();
      const c = await tpm.client();
      await c.pcrExtend(15, [{ hashAlg: TPM_ALG.SHA256, digest: createHash('sha256').update('cluster').digest() }]);
      await tpm.disconnect();
      const marked = start('azure-tdx', nodeRoot(), [`--tpm=unix:${tpm.socketPath}`]);
      assert.equal((await marked.waitForLog((l) => l.msg === 'node condition', 60_000)).condition, 'bootstrapped');
      await marked.stop();
    } finally {
      await tpm.stop();
    }
  });
});
