import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { findSecretLeaks } from './secrets.js';

describe('findSecretLeaks', () => {
  const key = randomBytes(32);
  it('finds a secret in each encoding a log could use, and names it without its value', () => {
    const forms = [key.toString('hex'), key.toString('hex').toUpperCase(), key.toString('base64'), key.toString('base64url'), JSON.stringify({ type: 'Buffer', data: [...key] }), `raw:${key.toString('latin1')}`];
    for (const line of forms) {
      const leaks = findSecretLeaks(`{"level":"debug","msg":"ticket"} ${line}\n`, [{ name: 'disk key', value: key }]);
      assert.ok(leaks.length > 0 && leaks.every((l) => l.startsWith('disk key (')), line);
      assert.ok(!leaks.join().includes(key.toString('hex')));
    }
    assert.deepEqual(findSecretLeaks('init secret: hunter2hunter2', [{ name: 'init secret', value: 'hunter2hunter2' }]), ['init secret (text)']);
  });

  it('finds nothing in clean text and refuses values too short to search for', () => {
    assert.deepEqual(findSecretLeaks(`${randomBytes(64).toString('hex')} ${randomBytes(64).toString('base64')}`, [{ name: 'k', value: key }]), []);
    assert.throws(() => findSecretLeaks('', [{ name: 'short', value: Buffer.alloc(4) }]), /too short/);
  });
});
