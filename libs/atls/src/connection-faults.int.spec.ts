import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { QemuVtpmIssuer, QemuVtpmValidator } from '@asterism/attestation';
import { missingComponent } from '@asterism/testing';
import { TPM_HT } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import type { AtlsChannelOptions } from './channel-credentials.js';
import { connectOnce, startFaultServer, type Fault } from './testing/fault-server.fixture.js';

const skip = swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT);

// The client's evidence comes from a real vTPM issuer on swtpm while the server misbehaves after
// the handshake, i.e. somewhere inside the attestation key's life on the TPM: it resets or closes
// the connection 0-7 ms after the handshake, answers with a certificate_required alert, or stays
// silent while the issuance deadline (1-10 ms, shorter than a quote) runs out. Every attempt must
// end typed, nothing may reach the process unhandled, and the TPM must be left clean.

// name, iterations, fault of iteration i, client options of iteration i, allowed outcomes, outcome that must occur
const cells: [string, number, (i: number) => Fault, (i: number) => Partial<AtlsChannelOptions>, RegExp, string][] = [
  ['reset', 100, (i) => ({ phase: 'after-handshake', action: 'reset', delayMs: i % 8 }), () => ({}), /^(connected|CONNECTION_LOST@client-evidence)$/, 'CONNECTION_LOST@client-evidence'],
  ['close', 40, (i) => ({ phase: 'after-handshake', action: 'close', delayMs: i % 8 }), () => ({}), /^(connected|CONNECTION_LOST@(server-verification|client-evidence))$/, 'CONNECTION_LOST@client-evidence'],
  ['certificate_required alert', 40, () => ({ phase: 'after-handshake', action: 'alert' }), () => ({}), /^TLS_ALERT@(server-verification|client-evidence)$/, 'TLS_ALERT@client-evidence'],
  ['issuer timeout', 40, () => ({ phase: 'after-handshake', action: 'stall' }), (i) => ({ issuanceTimeoutMs: 1 + (i % 10) }), /^(connected|ISSUER_TIMEOUT@client-evidence)$/, 'ISSUER_TIMEOUT@client-evidence'],
];

describe('aTLS client with a swtpm issuer under connection faults', { skip }, () => {
  let tpm: Swtpm;
  let issuer: QemuVtpmIssuer;
  const unhandled: unknown[] = [];
  const onUnhandled = (err: unknown) => unhandled.push(err);
  const transientHandles = async () => (await tpm.client()).listHandles(TPM_HT.TRANSIENT << 24);
  before(async () => {
    process.on('uncaughtException', onUnhandled);
    process.on('unhandledRejection', onUnhandled);
    tpm = await startSwtpm();
    issuer = new QemuVtpmIssuer(() => tpm.client());
  });
  after(async () => {
    process.off('uncaughtException', onUnhandled);
    process.off('unhandledRejection', onUnhandled);
    await tpm?.stop();
  });

  for (const [name, iterations, fault, options, allowed, required] of cells) {
    it(`${iterations} x ${name} during issuance: typed errors only, swtpm still issues, only the cached attestation key stays loaded`, async () => {
      const outcomes = new Map<string, number>();
      for (let i = 0; i < iterations; i++) {
        const server = await startFaultServer(fault(i));
        try {
          const res = await connectOnce(server.port, { issuer, ...options(i) });
          const key = res === 'connected' ? 'connected' : `${res.code}@${String(res.details.phase)}`;
          if (res !== 'connected') assert.equal(res.retryable, res.code !== 'TLS_ALERT', res.reason);
          outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
        } finally {
          await server.close();
        }
      }
      console.log(`[fault-injection] swtpm issuer, ${name}: ${JSON.stringify(Object.fromEntries(outcomes))}`);
      assert.ok((outcomes.get(required) ?? 0) > 0, `no ${required}: ${JSON.stringify([...outcomes])}`);
      for (const k of outcomes.keys()) assert.match(k, allowed);
      // Abandoned issuances finish in the background; one more issuance queues behind them all.
      const nonce = Buffer.alloc(32, iterations);
      const doc = await issuer.issue(nonce, nonce);
      assert.deepEqual(Buffer.from(await new QemuVtpmValidator(new Map()).validate(doc, nonce)), nonce);
      // Every attestation key of a failed issuance was flushed: only the one kept for later quotes is loaded.
      assert.equal((await transientHandles()).length, 1, 'only the cached attestation key is loaded');
      assert.deepEqual(unhandled, []);
    });
  }

  it('releasing the attestation keys leaves no transient object on the TPM', async () => {
    assert.equal(await issuer.releaseAttestationKeys(), 1);
    assert.deepEqual(await transientHandles(), [], 'every attestation key was flushed');
    assert.deepEqual(unhandled, []);
  });
});
