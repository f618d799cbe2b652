import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DummyIssuer } from '@asterism/attestation';
import { createNopLogger } from '@asterism/logger';
import { parseFlags } from '../flags.js';
import type { RunResult } from '../run.js';
import { NodeFileWriter } from '../state/file-writer.js';
import { kubeadmRuntime } from './kubeadm-runtime.js';

const metadata = {
  self: async () => assert.fail('the runtime reads no identity of its own'),
  list: async () => [],
  getLoadBalancerEndpoint: async () => ({ host: '', port: '' }),
  initSecretHash: async () => '',
  uid: async () => '',
};

function runtime(initSystem: 'systemd' | 'none') {
  const cfg = parseFlags(['--attestation-variant=dummy', `--init-system=${initSystem}`], {})!;
  return kubeadmRuntime({ cfg, metadata, files: new NodeFileWriter(mkdtempSync(join(tmpdir(), 'kubeadm-runtime-'))), logger: createNopLogger() });
}

describe('kubeadm node runtime', () => {
  it('is named by its init system; kubeadm both creates and joins the cluster', () => {
    for (const initSystem of ['systemd', 'none'] as const) {
      const r = runtime(initSystem);
      assert.equal(r.name, `kubeadm/${initSystem}`);
      assert.equal(r.initializer, r.joiner);
      assert.equal(r.keepsRecoveryServer, false, 'the process ends: the recovery server closes after the unlock');
    }
  });

  // The cluster runs the services as pods, the verification service included (docs/adr/0028).
  for (const result of ['joined', 'rejoined', 'initialized', 'agent-started'] as RunResult[]) {
    it(`after a bootstrap that ${result}: releases the TPM and lets the process exit`, async () => {
      let released = 0;
      const resident = await runtime('systemd').afterBoot({ result, issuer: new DummyIssuer(), releasePlatform: async () => void released++ });
      assert.equal(resident, undefined);
      assert.equal(released, 1);
    });
  }

  it('systemd: startNodeAgent resolves only after systemctl enable --now kubelet finished (the process exits right after a rejoin)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeadm-runtime-systemctl-'));
    const done = join(dir, 'done');
    writeFileSync(join(dir, 'systemctl'), `#!/bin/sh\nsleep 0.3\necho "$@" > ${done}\n`, { mode: 0o755 });
    const path = process.env.PATH;
    process.env.PATH = `${dir}:${path}`;
    try {
      await runtime('systemd').startNodeAgent();
    } finally {
      process.env.PATH = path;
    }
    assert.ok(existsSync(done), 'systemctl ran to its end before startNodeAgent resolved');
    assert.equal(readFileSync(done, 'utf8').trim(), 'enable --now kubelet');
  });
});
