/**
 * Handing a local node's verification service to the verification-service program
 * (hand-over.ts): the real program (from the sources through tsx) on a swtpm vTPM answers
 * verify.API once the hand-over reports success; a taken port, a program that exits at once and
 * one that never listens are reported as failures and leave no process behind. Loopback only.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { AttestationError, Measurements, QemuVtpmValidator, Variant } from '@asterism/attestation';
import { createNopLogger } from '@asterism/logger';
import { verify } from '@asterism/proto';
import { missingComponent } from '@asterism/testing';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import { TcpReadinessProbe } from '@asterism/bootstrapper/runtime';
import { programCommand } from './programs.js';
import { handOverVerification, type HandOverOptions } from './hand-over.js';

const skip = swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT);

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

/** Whether any process runs with `marker` in its command line. */
const running = (marker: string) => execFileSync('ps', ['-eo', 'args']).toString().includes(marker);

describe('handOverVerification', { skip }, () => {
  let swtpm: Swtpm;
  const started: number[] = [];
  const options = async (over: Partial<HandOverOptions> = {}): Promise<HandOverOptions> => ({
    cfg: { variant: Variant.fromString('qemu-vtpm'), tpm: `unix:${swtpm.socketPath}`, stateRoot: '/', initHost: '127.0.0.1', verifyGrpcPort: await freePort(), verifyHttpPort: 0, verbosity: 0, logFile: undefined },
    command: programCommand('verification-service'),
    probe: new TcpReadinessProbe(),
    logger: createNopLogger(),
    timeoutMs: 60_000,
    ...over,
  });

  before(async () => {
    swtpm = await startSwtpm();
    await (await swtpm.client()).startup('clear');
    await swtpm.disconnect();
  });
  after(async () => {
    for (const pid of started) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        /* gone */
      }
    }
    await swtpm?.stop();
  });

  it('resolves with the pid once the program serves: verify.API answers with a document from the node\'s TPM that validates for our nonce only', async () => {
    const o = await options();
    const handed = await handOverVerification(o);
    assert.ok(handed, 'hand-over succeeded');
    started.push(handed.pid);
    const client = new verify.APIClient(`127.0.0.1:${o.cfg.verifyGrpcPort}`, grpc.credentials.createInsecure());
    const nonce = randomBytes(32);
    const res = await new Promise<verify.GetAttestationResponse>((resolve, reject) => client.getAttestation({ nonce }, (e, r) => (e ? reject(e) : resolve(r))));
    client.close();
    assert.ok(res.attestation.length > 1000, `a vTPM document (${res.attestation.length} bytes)`);
    // The document is a qemu-vtpm attestation of this node's TPM bound to our nonce: the validator
    // checks the quote's signature by the document's AK and that it covers the nonce (no PCR
    // expectations: the swtpm's PCRs are whatever the test left in them).
    const validator = new QemuVtpmValidator(new Measurements());
    await validator.validate(res.attestation, nonce);
    await assert.rejects(validator.validate(res.attestation, randomBytes(32)), (e: unknown) => e instanceof AttestationError && e.code === 'NONCE_MISMATCH');
  });

  it('refuses when the port is taken already (a program that cannot bind would look ready)', async () => {
    const squatter = createServer().listen(0, '127.0.0.1');
    await once(squatter, 'listening');
    const o = await options();
    const handed = await handOverVerification({ ...o, cfg: { ...o.cfg, verifyGrpcPort: (squatter.address() as AddressInfo).port } });
    squatter.close();
    assert.equal(handed, undefined);
  });

  const broken: Array<[string, string, number]> = [
    ['exits at once', 'process.exit(3)', 60_000],
    ['never listens', 'setInterval(() => {}, 1000)', 1500],
  ];
  for (const [name, script, timeoutMs] of broken) {
    it(`a program that ${name}: undefined, and no process is left`, async () => {
      const marker = `hand-over-${randomBytes(6).toString('hex')}`;
      const t0 = Date.now();
      const handed = await handOverVerification(await options({ command: { binary: process.execPath, args: ['-e', `/* ${marker} */ ${script}`, '--'] }, timeoutMs }));
      assert.equal(handed, undefined);
      assert.ok(Date.now() - t0 < 30_000, 'an exited program is noticed without waiting for the timeout');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(running(marker), false, 'no process of the failed program survives');
    });
  }
});
