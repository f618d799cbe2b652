import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TDX_INDEX_CLUSTER_ID, unmarshalAttestationConfig } from '@asterism/attestation';
import { clusterIdPcr, clusterIdRtmr } from '../verify/running-node.js';
import { markedNodeConfig } from './marked-node-config.js';

describe('markedNodeConfig (a running node carries its cluster mark)', () => {
  const id = Buffer.alloc(32, 7);

  it('vTPM: PCR 15 expects the mark of the cluster ID, enforced; the other PCRs and the user\'s config are unchanged', () => {
    const att = unmarshalAttestationConfig(JSON.stringify({ measurements: { 4: { expected: 'aa'.repeat(32), warnOnly: false }, 15: { expected: '00'.repeat(32), warnOnly: false } } }), 'qemu-vtpm');
    const marked = markedNodeConfig(att, id);
    assert.deepEqual(marked.measurements.get(15), { expected: clusterIdPcr(id), validationOpt: 'Enforce' });
    assert.deepEqual(marked.measurements.get(4), att.measurements.get(4));
    assert.deepEqual(att.measurements.get(15)?.expected, Buffer.alloc(32), 'the input is not changed');
  });

  it('qemu-tdx: RTMR2 expects the SHA-384 mark', () => {
    const att = unmarshalAttestationConfig(JSON.stringify({ measurements: {} }), 'qemu-tdx');
    assert.deepEqual(markedNodeConfig(att, id).measurements.get(TDX_INDEX_CLUSTER_ID)?.expected, clusterIdRtmr(id));
  });
});
