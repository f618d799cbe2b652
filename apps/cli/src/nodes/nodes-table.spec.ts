import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NodeView } from '@asterism/node-attestation';
import { age, nodesTable } from './nodes-table.js';
import { formatWhatIf, wouldQuarantine, type WhatIfRow } from './what-if.js';

const NOW = new Date('2026-11-26T12:00:00Z');
const node = (name: string, o: Partial<NodeView> = {}): NodeView => ({ name, uid: 'u', controlPlane: false, internalIp: undefined, quarantined: false, condition: undefined, evidence: undefined, ...o });

describe('nodes table and what-if output', () => {
  it('ages read like kubectl', () => assert.deepEqual([age(5_000), age(119_000), age(600_000), age(3 * 3600_000), age(3 * 86_400_000)], ['5s', '119s', '10m', '3h', '3d']));

  it('a never-checked node says never; a failing quarantined one NO / YES with its reason', () => {
    const table = nodesTable(
      [
        node('w2'),
        node('w1', { quarantined: true, condition: { type: 'AttestationVerified', status: 'False', reason: 'MeasurementMismatch', lastHeartbeatTime: new Date('2026-11-26T11:59:00Z') } }),
      ],
      NOW,
    ).split('\n');
    assert.match(table[1]!, /^w1\s+worker\s+-\s+NO\s+2026-11-26T11:59:00Z\s+60s\s+MeasurementMismatch\s+YES$/);
    assert.match(table[2]!, /^w2\s+worker\s+-\s+never\s+-\s+-\s+-\s+no$/);
  });

  it('what-if lines; only running (not quarantined) refusals block an apply', () => {
    const rows: WhatIfRow[] = [
      { node: 'w1', quarantined: false, outcome: 'refuse', why: 'PCR[4] differs' },
      { node: 'w2', quarantined: true, outcome: 'refuse', why: 'PCR[4] differs' },
      { node: 'w3', quarantined: false, outcome: 'unknown', why: 'no evidence' },
    ];
    assert.equal(formatWhatIf(rows), 'would refuse w1: PCR[4] differs\nwould refuse w2 (quarantined): PCR[4] differs\ncannot judge w3: no evidence');
    assert.deepEqual(wouldQuarantine(rows).map((r) => r.node), ['w1']);
  });
});
