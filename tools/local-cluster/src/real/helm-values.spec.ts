/** The local cluster's chart values: the verification service's TPM per node kind. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { WORKSPACE_ROOT } from '@asterism/testing';
import { NODE_TPM_SOCKET } from './node-config.js';
import { localHelmValues, VM_TPM_LABEL } from './real-cluster.js';

const first = { name: 'control-plane-0', role: 'ControlPlane' as const, ip: '10.42.0.10' };
type Verification = { tpm: unknown; tpmOverride?: { nodeSelector: Record<string, string>; kind: string; hostPath: string } };

describe('local cluster helm values', () => {
  it('namespace nodes only: one DaemonSet on the swtpm socket', () => {
    const v = localHelmValues(first).verificationservice as Verification;
    assert.deepEqual(v.tpm, { kind: 'socket', hostPath: NODE_TPM_SOCKET });
    assert.equal(v.tpmOverride, undefined);
  });

  it('with VM nodes: the nodes the image\'s kubelet labels get /dev/tpmrm0 from a second DaemonSet', () => {
    const v = localHelmValues(first, true).verificationservice as Verification;
    assert.deepEqual(v.tpm, { kind: 'socket', hostPath: NODE_TPM_SOCKET });
    assert.deepEqual(v.tpmOverride, { nodeSelector: { [VM_TPM_LABEL]: 'device' }, kind: 'device', hostPath: '/dev/tpmrm0' });
    // The label is the one the image's kubelet registers with.
    const unit = readFileSync(join(WORKSPACE_ROOT, 'tools/image/rootfs/etc/systemd/system/kubelet.service'), 'utf8');
    assert.match(unit, new RegExp(`--node-labels=${VM_TPM_LABEL}=device`));
  });
});
