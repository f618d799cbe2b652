import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { residencyReason, type ResidencyFacts } from './residency.js';

describe('residencyReason', () => {
  const base: ResidencyFacts = { backend: 'local', result: 'joined', supervisesControlPlane: false, verificationPort: 0 };
  const cases: Array<[string, Partial<ResidencyFacts>, ReturnType<typeof residencyReason>]> = [
    ['local worker, nothing to serve: exits', {}, undefined],
    ['local rejoined node, nothing to serve: exits', { result: 'rejoined' }, undefined],
    ['local node serving verification: stays', { verificationPort: 30081 }, 'verification service'],
    ['local init node with the control plane: stays', { result: 'initialized', supervisesControlPlane: true }, 'control-plane services'],
    ['kubeadm joined node: exits (the chart\'s DaemonSet serves verification, ADR 0028)', { backend: 'kubeadm' }, undefined],
    ['kubeadm rejoined node: exits', { backend: 'kubeadm', result: 'rejoined' }, undefined],
    ['kubeadm init node: exits', { backend: 'kubeadm', result: 'initialized' }, undefined],
    ['stopped: exits', { result: 'stopped', supervisesControlPlane: true, verificationPort: 30081 }, undefined],
  ];
  for (const [name, over, want] of cases) {
    it(name, () => assert.equal(residencyReason({ ...base, ...over }), want));
  }
});
