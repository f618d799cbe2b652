/**
 * The monitor's check of a qemu-vtpm node on a REAL vTPM (swtpm): real quotes, the real validator
 * built from attestation config JSON as the joinservice builds it, the cluster mark in PCR 15, a
 * changed boot (PCR 9 extended) and the what-if judgement of the stored evidence.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { encodeAttestationConfig, QemuVtpmIssuer, unmarshalAttestationConfig, validatorFromConfigJson, type Validator } from '@asterism/attestation';
import { missingComponent } from '@asterism/testing';
import { range, TPM_ALG, type TpmClient } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import { judgeSummary, runningNodeConfig } from './judge.js';
import { GrpcAttestationSource } from './grpc-attestation-source.js';
import { NodeChecker } from './node-check.js';
import { startVerifyServer, type VerifyServerFixture } from './testing/verify-server.js';

const skip = swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT);
/** A minimal crypto-agile event log header (docs/protocol/vtpm-attestation.md). */
const MIN_EVENT_LOG = Buffer.from(
  '000000000300000000000000000000000000000000000000000000002500000053706563204944204576656e74303300000000000002000202000000040014000b00200000',
  'hex',
);
const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest();

describe('NodeChecker on a swtpm-backed qemu-vtpm node', { skip }, () => {
  let tpm: Swtpm;
  let c: TpmClient;
  let node: VerifyServerFixture;
  let configJson: string;
  let validator: Validator;
  const clusterId = randomBytes(32);

  before(async () => {
    tpm = await startSwtpm();
    c = await tpm.client();
    await c.pcrExtend(4, [{ hashAlg: TPM_ALG.SHA256, digest: sha256('kernel') }]);
    // The attestation config as a cluster enforces it: every PCR as booted, PCR 15 zero (fresh node).
    const measurements: Record<string, { expected: string; warnOnly: boolean }> = {};
    for (const [i, v] of await c.pcrRead(range(24))) measurements[String(i)] = { expected: Buffer.from(v).toString('hex'), warnOnly: false };
    configJson = JSON.stringify({ measurements });
    // The monitor holds running nodes to the config without PCR 15 (it checks the mark instead).
    validator = validatorFromConfigJson(encodeAttestationConfig(runningNodeConfig(unmarshalAttestationConfig(configJson, 'qemu-vtpm'))), 'qemu-vtpm');
    node = await startVerifyServer(new QemuVtpmIssuer(() => tpm.client(), async () => MIN_EVENT_LOG));
  });
  after(async () => {
    await node?.stop();
    await tpm?.stop();
  });
  const check = () => new NodeChecker({ source: new GrpcAttestationSource(), clusterId, timeoutMs: 10_000 }).check({ name: 'worker-1', endpoint: node.endpoint }, validator);

  it('a node without the cluster mark (PCR 15 zero) is Refused: ClusterMarkMismatch on PCR[15]', async () => {
    const v = await check();
    assert.equal(v.status, 'Refused', v.message);
    assert.equal(v.reason, 'ClusterMarkMismatch');
    assert.equal(v.field, 'PCR[15]');
  });

  it('marked with the cluster ID, the node is Verified; the summary has all 24 PCRs and the AK digest', async () => {
    await c.pcrExtend(15, [{ hashAlg: TPM_ALG.SHA256, digest: sha256(clusterId) }]);
    const v = await check();
    assert.equal(v.status, 'Verified', v.message);
    assert.equal(Object.keys(v.evidence!.values).length, 24);
    assert.match(v.evidence!.akDigest, /^sha256:[0-9a-f]{64}$/);
    assert.equal(judgeSummary(v.evidence!, unmarshalAttestationConfig(configJson, 'qemu-vtpm')).ok, true, 'the what-if accepts the current config');
    const dropped = JSON.parse(configJson) as { measurements: Record<string, { expected: string }> };
    dropped.measurements['4']!.expected = 'ab'.repeat(32);
    const whatIf = judgeSummary(v.evidence!, unmarshalAttestationConfig(JSON.stringify(dropped), 'qemu-vtpm'));
    assert.deepEqual([whatIf.ok, whatIf.field, whatIf.message], [false, 'PCR[4]', 'PCR[4] differs']);
  });

  it('a changed boot (PCR 9 extended) is Refused as MeasurementMismatch naming PCR[9]', async () => {
    await c.pcrExtend(9, [{ hashAlg: TPM_ALG.SHA256, digest: sha256('tampered initrd') }]);
    const v = await check();
    assert.equal(v.status, 'Refused');
    assert.equal(v.reason, 'MeasurementMismatch');
    assert.equal(v.field, 'PCR[9]');
    assert.match(v.message, /PCR\[9\] expected/);
    assert.equal(judgeSummary(v.evidence!, unmarshalAttestationConfig(configJson, 'qemu-vtpm')).field, 'PCR[9]', 'the stored evidence shows the change too');
  });
});
