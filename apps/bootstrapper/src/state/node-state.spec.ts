import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { NodeFileWriter } from './file-writer.js';
import { decodeNodeState, encodeNodeState, NODE_STATE_PATH, NodeStateError, readNodeState, writeNodeState } from './node-state.js';

describe('node state', () => {
  it('encodes byte-identically to the reference (TestToFile)', () => {
    assert.equal(encodeNodeState({ role: 'ControlPlane', measurementSalt: Buffer.from('Salt') }), '{\n\t"Role": "ControlPlane",\n\t"MeasurementSalt": "U2FsdA=="\n}');
  });

  it('decodes the reference format (TestFromFile), case-insensitive keys and role spellings', () => {
    assert.deepEqual(decodeNodeState('{"Role":"ControlPlane","MeasurementSalt":"U2FsdA=="}'), { role: 'ControlPlane', measurementSalt: Buffer.from('Salt') });
    assert.equal(decodeNodeState('{"role":"worker","measurementsalt":null}').role, 'Worker');
    assert.equal(decodeNodeState('{"Role":"control-plane"}').role, 'ControlPlane');
    assert.equal(decodeNodeState('{"Role":"??"}').role, 'Unknown');
  });

  for (const bad of ['', '[]', '{"MeasurementSalt": 5}', '{"MeasurementSalt": "!!"}']) {
    it(`rejects ${JSON.stringify(bad)}`, () => assert.throws(() => decodeNodeState(bad), NodeStateError));
  }

  it('writes create-exclusive with mode 0600 under a root and reads back', async () => {
    const root = mkdtempSync(join(tmpdir(), 'node-root-'));
    const w = new NodeFileWriter(root);
    await writeNodeState(w, { role: 'Worker', measurementSalt: Buffer.alloc(32, 2) });
    const path = w.resolve(NODE_STATE_PATH);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal((await readNodeState(path)).measurementSalt.length, 32);
    assert.match(readFileSync(path, 'utf8'), /"Role": "Worker"/);
    await assert.rejects(writeNodeState(w, { role: 'Worker', measurementSalt: Buffer.alloc(1) }), /EEXIST/);
    await assert.rejects(readNodeState(join(root, 'missing')), (e: unknown) => e instanceof NodeStateError && e.code === 'NODE_STATE_MISSING');
  });
});
