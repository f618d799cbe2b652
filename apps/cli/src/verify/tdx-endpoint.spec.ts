/**
 * `asterism verify --endpoint` and `asterism recover` on qemu-tdx over the real gRPC paths: a TD
 * (the qemu-tdx issuer over a configfs-tsm stand-in whose quotes are the real Intel vector
 * re-signed by a stand-in Intel PKI, with RTMR2 marked with a cluster ID) behind a verification
 * service and an aTLS recovery server; the CLI's validator gets its DCAP collateral from a local
 * stand-in PCS. The stand-in root is the one override flags cannot express.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseTdxQuote, tdMeasurements } from '@asterism/attestation';
import { makeSyntheticPki, resignedCollateral, tdxVector, type SyntheticPki } from '@asterism/attestation/testing';
import { encodeMasterSecretFile } from '../init/outputs.js';
import { recoverCommand } from '../recover/recover-cli.js';
import { startRecoveryServer, startVerifyServer, type LoopbackGrpc } from '../testing/attestation-servers.fixture.js';
import { startPcsServer, type PcsServer } from '../testing/pcs-server.fixture.js';
import { syntheticTd, type SyntheticTd } from '../testing/synthetic-td.fixture.js';
import type { CliValidatorOptions } from '../validators/cli-validator.js';
import { verifyCommand } from './verify-cli.js';

/** docs/protocol/key-hierarchy.md worked example: the cluster ID and RTMR2 after marking. */
const CLUSTER_ID = Buffer.from('fdb2f1753774fc73773199fc65f3df9c803176ccb88c9851ba73a3de276cddc8', 'hex');
const MARKED_RTMR2 = 'c7edab08ffef975c9859a0f0e478b05682bc50cf5e10f8242355190b016e351672b72dde0f07835bd41fa68e523e63b4';
const realBody = parseTdxQuote(tdxVector('quote-v4-spr.dat')).body;

async function run(command: typeof verifyCommand, args: string[], overrides: CliValidatorOptions): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await command(args, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) }, overrides);
  return { code, stdout, stderr };
}

describe('qemu-tdx from the CLI: verify --endpoint and recover over gRPC, DCAP collateral from PCS', () => {
  const dir = mkdtempSync(join(tmpdir(), 'asterism-cli-tdx-'));
  let pki: SyntheticPki;
  let pcs: PcsServer;
  let td: SyntheticTd;
  let service: LoopbackGrpc;
  let overrides: CliValidatorOptions;
  const configFile = (name: string, edit: (m: Record<string, { expected: string; warnOnly: boolean }>) => void = () => undefined) => {
    // The image's MRTD and RTMR0..3; RTMR2 (index 3) zero as for a node still to be joined.
    const measurements = Object.fromEntries([...tdMeasurements(realBody)].map(([i, v]) => [String(i), { expected: (i === 3 ? Buffer.alloc(48) : v).toString('hex'), warnOnly: false }]));
    edit(measurements);
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify({ measurements }));
    return path;
  };
  let att: string[];

  before(async () => {
    pki = makeSyntheticPki();
    pcs = await startPcsServer(resignedCollateral(pki, new Date()));
    td = syntheticTd(pki, Buffer.from(MARKED_RTMR2, 'hex'));
    service = await startVerifyServer(td.issuer);
    overrides = { intelRoot: pki.root.pem, pcs: pcs.pcs };
    att = ['--variant=qemu-tdx', `--attestation-config=${configFile('qemu-tdx.json')}`];
  });
  after(async () => {
    await service?.stop();
    await pcs?.stop();
    td?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  it('right --cluster-id: accepted (exit 0); MRTD/RTMR table, TCB status, RTMR2 compared with the cluster ID', async () => {
    const r = await run(verifyCommand, [`--endpoint=${service.endpoint}`, `--cluster-id=${CLUSTER_ID.toString('base64')}`, ...att], overrides);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /All enforced measurements match/);
    assert.match(r.stdout, /DCAP: quote verified; TCB status UpToDate/);
    assert.match(r.stdout, new RegExp(`Cluster ID \\(RTMR2\\): matches\\n {2}expected ${MARKED_RTMR2}\\n {2}actual {3}${MARKED_RTMR2}`));
    assert.match(r.stdout, /is attested as qemu-tdx and belongs to the given cluster: accepted/);
  });

  it('wrong --cluster-id: refused (exit 1) naming RTMR2; -o json carries the register', async () => {
    const other = createHash('sha256').update('another cluster').digest();
    const r = await run(verifyCommand, [`--endpoint=${service.endpoint}`, `--cluster-id=${other.toString('hex')}`, ...att], overrides);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`Cluster ID \\(RTMR2\\): MISMATCH\\n {2}expected [0-9a-f]{96}\\n {2}actual {3}${MARKED_RTMR2}`));
    assert.match(r.stdout, /its RTMR2 does not carry the given cluster ID/);
    const json = await run(verifyCommand, [`--endpoint=${service.endpoint}`, `--cluster-id=${other.toString('hex')}`, '-o', 'json', ...att], overrides);
    const parsed = JSON.parse(json.stdout) as { accepted: boolean; clusterId: { register: string; ok: boolean }; measurements: { index: number; status: string }[] };
    assert.deepEqual([parsed.accepted, parsed.clusterId.register, parsed.clusterId.ok], [false, 'RTMR2', false]);
    assert.deepEqual(parsed.measurements.map((m) => `${m.index}:${m.status}`), ['0:ok', '1:ok', '2:ok', '3:info', '4:ok']);
  });

  it('a TD whose RTMR1 differs from the expected image: refused (exit 1), naming TDX index 2', async () => {
    const config = configFile('other-rtmr1.json', (m) => (m['2']!.expected = 'ab'.repeat(48)));
    const r = await run(verifyCommand, [`--endpoint=${service.endpoint}`, '--variant=qemu-tdx', `--attestation-config=${config}`], overrides);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, / {2}2 {2}MISMATCH +expected (ab){48}/);
    assert.match(r.stdout, /Enforced measurements differ at TDX index 2/);
  });

  it('--collateral-dir then --collateral-offline: the second run verifies without PCS', async () => {
    const cache = join(dir, 'collateral');
    const args = [`--endpoint=${service.endpoint}`, ...att, `--collateral-dir=${cache}`];
    assert.equal((await run(verifyCommand, args, overrides)).code, 0);
    assert.equal(readdirSync(join(cache, 'tdx-pcs')).length, 4);
    const before = pcs.requests.length;
    const offline = await run(verifyCommand, [...args, '--collateral-offline'], overrides);
    assert.equal(offline.code, 0, offline.stdout + offline.stderr);
    assert.equal(pcs.requests.length, before);
    const empty = await run(verifyCommand, [`--endpoint=${service.endpoint}`, ...att, `--collateral-dir=${join(dir, 'empty')}`, '--collateral-offline'], overrides);
    assert.equal(empty.code, 1);
    assert.match(empty.stdout, /is refused: tdx-pcs collateral for .* is not cached and the cache is offline/);
  });

  it('the embedded Intel root does not vouch for the stand-in PKI: refused (exit 1)', async () => {
    const r = await run(verifyCommand, [`--endpoint=${service.endpoint}`, ...att], { pcs: pcs.pcs });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /is refused: .*does not verify/);
  });

  it('recover on qemu-tdx: the rebooted node (RTMR2 zero) attests over aTLS and gets the master secret; with the wrong root nothing is sent', async () => {
    const rebooted = syntheticTd(pki, Buffer.alloc(48));
    const recovery = await startRecoveryServer(rebooted.issuer);
    const secret = join(dir, 'asterism-mastersecret.json');
    writeFileSync(secret, encodeMasterSecretFile({ key: Buffer.alloc(32, 7), salt: Buffer.alloc(32, 9) }));
    try {
      const args = [`--endpoint=${recovery.endpoint}`, `--master-secret=${secret}`, ...att, '--timeout=5'];
      const ok = await run(recoverCommand, args, overrides);
      assert.equal(ok.code, 0, ok.stdout + ok.stderr);
      assert.match(ok.stdout, /127\.0\.0\.1:\d+\trecovered/);
      assert.equal(recovery.calls(), 1);
      const refused = await run(recoverCommand, args, { pcs: pcs.pcs });
      assert.equal(refused.code, 1, refused.stdout + refused.stderr);
      assert.match(refused.stdout, /FAILED \(ATTESTATION_FAILED\)/);
      assert.equal(recovery.calls(), 1, 'no master secret for a node that failed attestation');
    } finally {
      await recovery.stop();
      rebooted.remove();
    }
  });
});
