import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decide, type PolicyInput } from './quarantine-policy.js';
import type { Verdict } from './verdict.js';

const T0 = new Date('2026-11-26T12:00:00Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);
const verdict = (status: Verdict['status'], s = 0): Verdict => ({
  node: 'n',
  status,
  reason: status === 'Verified' ? 'Verified' : status === 'Refused' ? 'MeasurementMismatch' : 'Unreachable',
  message: '',
  at: at(s),
  latencyMs: 1,
});
const base: PolicyInput = { verdict: verdict('Verified'), node: { controlPlane: false, quarantined: false }, unreachableSince: undefined, graceMs: 180_000, mode: 'enforce', otherHealthyControlPlanes: 1 };

describe('quarantine policy', () => {
  const cases: Array<[string, Partial<PolicyInput>, ReturnType<typeof decide>]> = [
    ['a verified node is recorded, never quarantined', {}, { record: true, quarantine: 'no' }],
    ['a refused worker is quarantined at once', { verdict: verdict('Refused') }, { record: true, quarantine: 'yes' }],
    ['an unreachable worker inside the grace period keeps its last condition', { verdict: verdict('Unreachable', 179), unreachableSince: at(0) }, { record: false, quarantine: 'no' }],
    ['an unreachable worker for its first time is inside the grace period', { verdict: verdict('Unreachable', 0) }, { record: false, quarantine: 'no' }],
    ['an unreachable worker after the grace period is recorded and quarantined', { verdict: verdict('Unreachable', 180), unreachableSince: at(0) }, { record: true, quarantine: 'yes' }],
    ['an already quarantined node is not quarantined again', { verdict: verdict('Refused'), node: { controlPlane: false, quarantined: true } }, { record: true, quarantine: 'already' }],
    ['warn mode records without quarantining', { verdict: verdict('Refused'), mode: 'warn' }, { record: true, quarantine: 'warn-only' }],
    ['the last healthy control plane is never quarantined', { verdict: verdict('Refused'), node: { controlPlane: true, quarantined: false }, otherHealthyControlPlanes: 0 }, { record: true, quarantine: 'withheld' }],
    ['a control plane with a healthy peer is quarantined', { verdict: verdict('Refused'), node: { controlPlane: true, quarantined: false }, otherHealthyControlPlanes: 1 }, { record: true, quarantine: 'yes' }],
    ['a worker is quarantined even with no healthy control plane', { verdict: verdict('Refused'), otherHealthyControlPlanes: 0 }, { record: true, quarantine: 'yes' }],
  ];
  for (const [name, input, want] of cases) it(name, () => assert.deepEqual(decide({ ...base, ...input }), want));
});
