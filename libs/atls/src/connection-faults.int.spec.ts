import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QemuVtpmIssuer, QemuVtpmValidator } from '@asterism/attestation';
import { missingComponent } from '@asterism/testing';
import { TPM_HT } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT } from '@asterism/tpm/testing';
import { connectOnce, startFaultServer } from './testing/fault-server.js';

const skip = swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT);
const ITERATIONS = 200;

// The client's evidence comes from a real vTPM issuer on swtpm; the server resets the connection
// 0-7 ms after the handshake, i.e. somewhere inside the attestation key's life on the TPM.
describe('aTLS client with a swtpm issuer under connection resets', { skip }, () => {
  it(`${ITERATIONS} resets during issuance: typed errors only, no attestation key left on the TPM, issuance still works`, async () => {
    const tpm = await startSwtpm();
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('uncaughtException', onUnhandled);
    process.on('unhandledRejection', onUnhandled);
    try {
      const issuer = new QemuVtpmIssuer(() => tpm.client());
      const outcomes = new Map<string, number>();
      for (let i = 0; i < ITERATIONS; i++) {
        const server = await startFaultServer({ phase: 'after-handshake', action: 'reset', delayMs: i % 8 });
        try {
          const res = await connectOnce(server.port, { issuer });
          const key = res === 'connected' ? 'connected' : `${res.code}@${String(res.details.phase)}`;
          if (res !== 'connected') assert.equal(res.retryable, true, res.reason);
          outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
        } finally {
          await server.close();
        }
      }
      assert.ok((outcomes.get('CONNECTION_LOST@client-evidence') ?? 0) > 0, `no reset landed during issuance: ${JSON.stringify([...outcomes])}`);
      for (const k of outcomes.keys()) assert.match(k, /^(connected|CONNECTION_LOST@client-evidence)$/);
      // Abandoned issuances finish in the background; one more issuance queues behind them all.
      const nonce = Buffer.alloc(32, 7);
      const doc = await issuer.issue(nonce, nonce);
      assert.deepEqual(Buffer.from(await new QemuVtpmValidator(new Map()).validate(doc, nonce)), nonce);
      // The one attestation key kept loaded for later quotes is all that is left on the TPM;
      // every AK of a failed issuance was flushed. Releasing it leaves nothing.
      assert.equal((await (await tpm.client()).listHandles(TPM_HT.TRANSIENT << 24)).length, 1, 'only the cached attestation key is loaded');
      assert.equal(await issuer.releaseAttestationKeys(), 1);
      assert.deepEqual(await (await tpm.client()).listHandles(TPM_HT.TRANSIENT << 24), [], 'every attestation key was flushed');
      assert.deepEqual(unhandled, []);
      console.log(`[fault-injection] swtpm issuer outcomes: ${JSON.stringify(Object.fromEntries(outcomes))}`);
    } finally {
      process.off('uncaughtException', onUnhandled);
      process.off('unhandledRejection', onUnhandled);
      await tpm.stop();
    }
  });
});
