import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttestationError } from '../errors.js';
import { decodeGceInstanceInfo, encodeGceInstanceInfo } from './gce-identity.js';

describe('GCE instance info', () => {
  it('encodes go-tpm-tools GCEInstanceInfo JSON (snake_case) and decodes it back', () => {
    const info = { zone: 'us-central1-a', projectId: 'example.com:my-project', instanceName: 'worker-7' };
    const json = encodeGceInstanceInfo(info);
    assert.equal(json.toString(), '{"zone":"us-central1-a","project_id":"example.com:my-project","instance_name":"worker-7"}');
    assert.deepEqual(decodeGceInstanceInfo(json), info);
  });

  const bad: Array<[string, string | null, string]> = [
    ['no instance info', null, 'InstanceInfo'],
    ['missing zone', '{"project_id":"p-1","instance_name":"n"}', 'zone'],
    ['path traversal in the project', '{"zone":"z","project_id":"../../x","instance_name":"n"}', 'project_id'],
    ['slash in the instance name', '{"zone":"z","project_id":"p-1","instance_name":"a/b"}', 'instance_name'],
    ['query in the zone', '{"zone":"z?x=1","project_id":"p-1","instance_name":"n"}', 'zone'],
    ['number as name', '{"zone":"z","project_id":"p-1","instance_name":5}', 'instance_name'],
  ];
  for (const [name, json, field] of bad) {
    it(`refuses: ${name}`, () => {
      assert.throws(
        () => decodeGceInstanceInfo(json === null ? null : Buffer.from(json)),
        (e: unknown) => e instanceof AttestationError && e.code === 'DOCUMENT_MALFORMED' && e.details.field === field,
      );
    });
  }
});
