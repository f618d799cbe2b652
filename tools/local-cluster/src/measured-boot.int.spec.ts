import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QemuVtpmIssuer, validatorFromConfigJson } from '@asterism/attestation';
import { TpmNodeMarker } from '@asterism/nodelock';
import { missingComponent } from '@asterism/testing';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT } from '@asterism/tpm/testing';
import { randomBytes } from 'node:crypto';
import { attestationConfigJson as imageConfigJson, replay, type PredictedPcr } from '@asterism/image';
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

  it("replaying a node image's predicted events satisfies the image's config (PCRs 4, 8, 9, 11-13, 15 enforced); a tampered boot is refused naming PCR 9", async () => {
    // A prediction as tools/image makes one: digests per PCR, value = their replay (ADR 0039).
    const digests = new Map([4, 5, 9, 11].map((i) => [i, [randomBytes(32), randomBytes(32)]] as const));
    const pcrs: PredictedPcr[] = [4, 5, 8, 9, 11, 12, 13, 15].map((index) => {
      const d = digests.get(index) ?? [];
      return { index, value: d.length ? replay(d) : Buffer.alloc(32), enforced: index !== 5, events: [], digests: d };
    });
    const validator = validatorFromConfigJson(imageConfigJson(pcrs), 'qemu-vtpm');
    const nonce = Buffer.alloc(32, 7);
    for (const tamper of [false, true]) {
      const tpm = await startSwtpm();
      try {
        await tpm.disconnect();
        await measureBoot(tpm.socketPath, { tamper, events: digests });
        const doc = await new QemuVtpmIssuer(() => tpm.client()).issue(nonce, nonce);
        if (tamper) await assert.rejects(validator.validate(doc, nonce), /PCR\[9\]|\b9\b/);
        else assert.deepEqual(Buffer.from(await validator.validate(doc, nonce)), nonce);
      } finally {
        await tpm.stop();
      }
    }
  });
});
