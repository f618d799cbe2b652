import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { missingComponent } from '@asterism/testing';
import { TPM_ALG } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT } from '@asterism/tpm/testing';
import { NodeLock } from './node-lock.js';
import { isNodeBootstrapped, TpmNodeMarker } from './tpm-marker.js';

const skip = swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT);

/** docs/protocol/key-hierarchy.md worked example. */
const CLUSTER_ID = Buffer.from('fdb2f1753774fc73773199fc65f3df9c803176ccb88c9851ba73a3de276cddc8', 'hex');
const PCR15_AFTER_MARKING = '84f5b69861cd9abfb41bb3adbc2e60e9ef583f5a0551e7dd50583cf6a9a17b95';

describe('NodeLock with the PCR 15 marker on swtpm', { skip }, () => {
  it('1,000 concurrent tryLockOnce calls: exactly one winner, PCR 15 equals the documented value in every bank; a reboot resets it', async () => {
    const tpm = await startSwtpm();
    try {
      const c = await tpm.client();
      assert.equal(await isNodeBootstrapped(c), false);
      let opened = 0;
      const lock = new NodeLock(new TpmNodeMarker(async () => (opened++, tpm.client())));
      const results = await Promise.all(
        Array.from({ length: 1000 }, async (_, i) => {
          await new Promise((r) => setTimeout(r, i % 5));
          return lock.tryLockOnce(CLUSTER_ID, i % 2 ? 'join' : 'init');
        }),
      );
      assert.equal(results.filter((r) => r === 'acquired').length, 1);
      assert.equal(results.filter((r) => r === 'already-locked').length, 999);
      assert.equal(opened, 1, 'only the winner touched the TPM');
      assert.equal((await c.pcrRead([15])).get(15)!.toString('hex'), PCR15_AFTER_MARKING);
      for (const [alg, hash] of [[TPM_ALG.SHA1, 'sha1'], [TPM_ALG.SHA384, 'sha384']] as const) {
        const h = createHash(hash);
        const zero = Buffer.alloc(h.copy().digest().length);
        const want = h.update(Buffer.concat([zero, createHash(hash).update(CLUSTER_ID).digest()])).digest();
        assert.deepEqual((await c.pcrRead([15], alg)).get(15), want, `bank ${hash}`);
      }
      assert.equal(await isNodeBootstrapped(c), true);
      // The mark lasts until the next boot: CMD_INIT (a power cycle) resets PCR 15.
      await tpm.reboot();
      assert.equal(await isNodeBootstrapped(await tpm.client()), false);
    } finally {
      await tpm.stop();
    }
  });
});
