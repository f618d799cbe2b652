import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QemuVtpmIssuer } from '@asterism/attestation';
import { missingComponent } from '@asterism/testing';
import { TPM_HT, TPM_RC, TpmResponseError } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT } from '@asterism/tpm/testing';
import { SharedTpm } from './shared-tpm.js';

const skip = swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT);

describe('SharedTpm on swtpm', { skip }, () => {
  it('flushes attestation keys a crashed bootstrapper left behind, so the next issuance works', async () => {
    const tpm = await startSwtpm();
    try {
      // A bootstrapper that died mid-issuance: keys loaded, connection gone, nothing flushed.
      const crashed = await tpm.client();
      const leftovers: number[] = [];
      let full: unknown;
      for (let i = 0; i < 8 && !full; i++) {
        try {
          leftovers.push((await crashed.createAttestationKey('ecc')).handle);
        } catch (err) {
          full = err;
        }
      }
      assert.ok(full instanceof TpmResponseError && full.rc === TPM_RC.OBJECT_MEMORY, `expected TPM_RC_OBJECT_MEMORY, got ${String(full)}`);
      await tpm.disconnect();

      const flushed: number[] = [];
      const shared = new SharedTpm(`unix:${tpm.socketPath}`, (n) => flushed.push(n));
      try {
        const issuer = new QemuVtpmIssuer(shared.open);
        const doc = await issuer.issue(Buffer.alloc(32, 1), Buffer.alloc(32, 2));
        assert.ok(doc.length > 0);
        assert.deepEqual(flushed, [leftovers.length]);
        // Only the attestation key the issuer keeps for its next quotes is loaded.
        assert.equal((await (await shared.open()).listHandles(TPM_HT.TRANSIENT << 24)).length, 1);
        await issuer.releaseAttestationKeys();
        assert.deepEqual(await (await shared.open()).listHandles(TPM_HT.TRANSIENT << 24), []);
      } finally {
        await shared.close();
      }
    } finally {
      await tpm.stop();
    }
  });
});
