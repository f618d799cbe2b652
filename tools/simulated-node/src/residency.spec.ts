import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { handsOverVerification, residencyReason, type ResidencyFacts } from './residency.js';

describe('residencyReason', () => {
  const base: ResidencyFacts = { result: 'joined', supervisesControlPlane: false, verificationPort: 0 };
  const cases: Array<[string, Partial<ResidencyFacts>, ReturnType<typeof residencyReason>]> = [
    ['local worker, nothing to serve: exits', {}, undefined],
    ['local rejoined node, nothing to serve: exits', { result: 'rejoined' }, undefined],
    ['local node serving verification: stays', { verificationPort: 30081 }, 'verification service'],
    ['local init node with the control plane: stays', { result: 'initialized', supervisesControlPlane: true }, 'control-plane services'],
    ['init node, verification off: stays for its control plane', { result: 'initialized', supervisesControlPlane: true, verificationPort: 0 }, 'control-plane services'],
    ['failed: exits', { result: 'failed', supervisesControlPlane: true, verificationPort: 30081 }, undefined],
    ['already bootstrapped in this boot, verification on: stays', { result: 'agent-started', verificationPort: 30081 }, 'verification service'],
    ['stopped: exits', { result: 'stopped', supervisesControlPlane: true, verificationPort: 30081 }, undefined],
    ['local worker with a verification-service program: exits (the program serves it)', { verificationPort: 30081, verificationProgram: true }, undefined],
    ['local init node with a verification-service program: stays for its control plane', { result: 'initialized', supervisesControlPlane: true, verificationPort: 30081, verificationProgram: true }, 'control-plane services'],
  ];
  for (const [name, over, want] of cases) {
    it(name, () => assert.equal(residencyReason({ ...base, ...over }), want));
  }
});

describe('handsOverVerification', () => {
  const base: ResidencyFacts = { result: 'joined', supervisesControlPlane: false, verificationPort: 30081, verificationProgram: true };
  const cases: Array<[string, Partial<ResidencyFacts>, boolean]> = [
    ['joined local worker with a program', {}, true],
    ['rejoined local worker with a program', { result: 'rejoined' }, true],
    ['already bootstrapped in this boot (agent started)', { result: 'agent-started' }, true],
    ['no program: the bootstrapper serves it itself', { verificationProgram: false }, false],
    ['verification off', { verificationPort: 0 }, false],
    ['init node: stays and serves it', { result: 'initialized', supervisesControlPlane: true }, false],
    ['stopped', { result: 'stopped' }, false],
    ['failed', { result: 'failed' }, false],
    ['initialised node without a control plane to supervise (it failed to start)', { result: 'initialized' }, true],
  ];
  for (const [name, over, want] of cases) {
    it(name, () => assert.equal(handsOverVerification({ ...base, ...over }), want));
  }
});
