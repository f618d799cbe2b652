import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QemuVtpmIssuer, validatorFromConfigJson } from '@asterism/attestation';
import { TpmNodeMarker } from '@asterism/nodelock';
import { missingComponent } from '@asterism/testing';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT } from '@asterism/tpm/testing';
import { attestationConfigJson, measureBoot } from './measured-boot.js';

const skip = swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT);

describe('local cluster attestation config', { skip }, () => {
  it('accepts a freshly booted node and refuses one whose PCR 15 already carries a cluster ID', async () => {
    const tpm = await startSwtpm();
    try {
      await tpm.disconnect(); // swtpm serves one connection; measureBoot opens its own
      await measureBoot(tpm.socketPath);
      const validator = validatorFromConfigJson(attestationConfigJson(), 'qemu-vtpm');
      const issuer = new QemuVtpmIssuer(() => tpm.client());
      const nonce = Buffer.alloc(32, 4);
      assert.deepEqual(Buffer.from(await validator.validate(await issuer.issue(nonce, nonce), nonce)), nonce);
      // The node joins (or is initialised) for some cluster: PCR 15 is extended with its ID.
      await new TpmNodeMarker(() => tpm.client()).markNodeAsBootstrapped(Buffer.alloc(32, 0x5a));
      await assert.rejects(validator.validate(await issuer.issue(nonce, nonce), nonce), /15/);
    } finally {
      await tpm.stop();
    }
  });
});
