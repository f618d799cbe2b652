/**
 * `asterism nodes`, `node quarantine|readmit` and `config check|apply` against a REAL
 * kube-apiserver, with a qemu-vtpm node on swtpm behind a real verify.API server and evidence
 * taken by the same checker the attestation monitor runs.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { encodeAttestationConfig, QemuVtpmIssuer, unmarshalAttestationConfig, validatorFromConfigJson } from '@asterism/attestation';
import { startTestControlPlane, testenvUnavailable, type TestControlPlane } from '@asterism/k8s-testenv';
import { DenyListStore, GrpcAttestationSource, NodeChecker, NodeStatusWriter, QUARANTINE_TAINT, runningNodeConfig } from '@asterism/node-attestation';
import { startVerifyServer, type VerifyServerFixture } from '@asterism/node-attestation/testing';
import { missingComponent } from '@asterism/testing';
import { range, TPM_ALG, type TpmClient } from '@asterism/tpm';
import { startSwtpm, swtpmAvailable, SWTPM_INSTALL_HINT, type Swtpm } from '@asterism/tpm/testing';
import { configCommand } from './config-cli.js';
import { nodeCommand, nodesCommand } from './node-cli.js';

const skip = testenvUnavailable() || (swtpmAvailable() ? false : missingComponent('swtpm', SWTPM_INSTALL_HINT));
const MIN_EVENT_LOG = Buffer.from(
  '000000000300000000000000000000000000000000000000000000002500000053706563204944204576656e74303300000000000002000202000000040014000b00200000',
  'hex',
);
const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest();

describe('cluster commands (nodes, node, config) on a real kube-apiserver', { skip }, () => {
  let cp: TestControlPlane;
  let tpm: Swtpm;
  let server: VerifyServerFixture;
  let dir: string;
  let measurements: Record<string, { expected: string; warnOnly: boolean }>;
  const clusterId = randomBytes(32);
  const run = async (fn: (argv: string[], out: { stdout: (s: string) => void; stderr: (s: string) => void }) => Promise<number>, argv: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await fn([...argv, `--kubeconfig=${cp.adminKubeconfigPath}`], { stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s) });
    return { code, stdout, stderr };
  };
  const configFile = (m: typeof measurements, name: string) => {
    const p = join(dir, name);
    writeFileSync(p, JSON.stringify({ measurements: m }));
    return p;
  };
  const joinConfig = async () => (await cp.admin.core.readNamespacedConfigMap({ namespace: 'kube-system', name: 'join-config' })).data!;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cluster-commands-'));
    cp = await startTestControlPlane();
    const core = cp.admin.core;
    tpm = await startSwtpm();
    const c = await tpm.client();
    await c.pcrExtend(4, [{ hashAlg: TPM_ALG.SHA256, digest: sha256('kernel') }]);
    measurements = {};
    for (const [i, v] of await c.pcrRead(range(24))) measurements[String(i)] = { expected: Buffer.from(v).toString('hex'), warnOnly: false };
    await c.pcrExtend(15, [{ hashAlg: TPM_ALG.SHA256, digest: sha256(clusterId) }]);
    server = await startVerifyServer(new QemuVtpmIssuer(() => tpm.client(), async () => MIN_EVENT_LOG));
    await core.createNamespace({ body: { metadata: { name: 'kube-system' } } }).catch(() => undefined);
    await core.createNamespacedConfigMap({ namespace: 'kube-system', body: { metadata: { name: 'join-config' }, data: { attestationConfig: JSON.stringify({ measurements }) } } });
    for (const [name, labels] of [['cp-1', { 'node-role.kubernetes.io/control-plane': '' }], ['worker-1', {}], ['worker-2', {}]] as const) {
      await core.createNode({ body: { metadata: { name, labels } } });
    }
    // Evidence as the monitor stores it: worker-1 checked live, worker-2 booted the same image.
    const status = new NodeStatusWriter(core);
    const validator = validatorFromConfigJson(encodeAttestationConfig(runningNodeConfig(unmarshalAttestationConfig(JSON.stringify({ measurements }), 'qemu-vtpm'))), 'qemu-vtpm');
    const v = await new NodeChecker({ source: new GrpcAttestationSource(), clusterId, timeoutMs: 10_000 }).check({ name: 'worker-1', endpoint: server.endpoint }, validator);
    assert.equal(v.status, 'Verified', v.message);
    for (const name of ['worker-1', 'worker-2', 'cp-1']) {
      await status.setEvidence(name, v.evidence!);
      await status.setCondition((await status.get(name))!, { ...v, node: name });
    }
  });
  after(async () => {
    await server?.stop();
    await tpm?.stop();
    await cp?.stop();
  });

  it('nodes: one row per node with role, variant, verified, reason and quarantine', async () => {
    const r = await run((a, o) => nodesCommand(a, o), []);
    assert.equal(r.code, 0);
    const lines = r.stdout.trim().split('\n');
    assert.match(lines[0]!, /^NODE\s+ROLE\s+VARIANT\s+VERIFIED\s+LAST CHECK\s+AGE\s+REASON\s+QUARANTINED$/);
    assert.match(lines[1]!, /^cp-1\s+control-plane\s+qemu-vtpm\s+yes\s+\S+Z\s+\d+s\s+Verified\s+no$/);
    assert.equal(lines.length, 4);
  });

  it('config check: the current config accepts everyone; one with a different PCR 4 names every node it would refuse', async () => {
    const same = await run((a, o) => configCommand(a, o), ['check', '--variant=qemu-vtpm', `--attestation-config=${configFile(measurements, 'same.json')}`]);
    assert.equal(same.code, 0, same.stdout + same.stderr);
    assert.match(same.stdout, /^would accept worker-1: accepted/m);
    const changed = { ...measurements, '4': { expected: 'ab'.repeat(32), warnOnly: false } };
    const r = await run((a, o) => configCommand(a, o), ['check', '--variant=qemu-vtpm', `--attestation-config=${configFile(changed, 'new.json')}`]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /^would refuse worker-1: PCR\[4\] differs \(evidence of /m);
    assert.match(r.stdout, /^would refuse worker-2: PCR\[4\] differs/m);
  });

  it('config apply: refused without --force when running nodes would be refused; --warn-only applies and sets warn mode', async () => {
    const changed = configFile({ ...measurements, '4': { expected: 'ab'.repeat(32), warnOnly: false } }, 'new.json');
    const before = (await joinConfig()).attestationConfig;
    const refused = await run((a, o) => configCommand(a, o), ['apply', '--variant=qemu-vtpm', `--attestation-config=${changed}`]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /would quarantine running nodes: cp-1, worker-1, worker-2/);
    assert.equal((await joinConfig()).attestationConfig, before, 'join-config unchanged');
    const warned = await run((a, o) => configCommand(a, o), ['apply', '--variant=qemu-vtpm', `--attestation-config=${changed}`, '--warn-only']);
    assert.equal(warned.code, 0, warned.stderr);
    assert.deepEqual([(await joinConfig()).attestationMode, JSON.parse((await joinConfig()).attestationConfig!).measurements['4'].expected], ['warn', 'ab'.repeat(32)]);
    const back = await run((a, o) => configCommand(a, o), ['apply', '--variant=qemu-vtpm', `--attestation-config=${configFile(measurements, 'same.json')}`, '--enforce']);
    assert.equal(back.code, 0, back.stderr);
    assert.equal((await joinConfig()).attestationMode, 'enforce');
  });

  it('node quarantine: the last healthy control plane is refused; a worker is tainted and deny-listed', async () => {
    const cpRefused = await run((a, o) => nodeCommand(a, o), ['quarantine', 'cp-1']);
    assert.equal(cpRefused.code, 1);
    assert.match(cpRefused.stderr, /last healthy control plane/);
    const r = await run((a, o) => nodeCommand(a, o), ['quarantine', 'worker-1', '--reason=suspicious reboot']);
    assert.equal(r.code, 0, r.stderr);
    const node = await cp.admin.core.readNode({ name: 'worker-1' });
    assert.ok(node.spec?.taints?.some((t) => t.key === QUARANTINE_TAINT && t.effect === 'NoExecute'));
    assert.deepEqual((await new DenyListStore(cp.admin.core).list()).map((e) => [e.kind, e.node]), [['ak', 'worker-1']]);
  });

  it('node readmit: refused while the node fails (PCR 9 extended), accepted once the config accepts its boot', async () => {
    const c = await tpm.client();
    await c.pcrExtend(9, [{ hashAlg: TPM_ALG.SHA256, digest: sha256('changed initrd') }]);
    const args = ['readmit', 'worker-1', `--endpoint=${server.endpoint}`, `--cluster-id=${clusterId.toString('hex')}`];
    const refused = await run((a, o) => nodeCommand(a, o), args);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /refused, worker-1 still fails: MeasurementMismatch \(PCR\[9\]\)/);
    assert.ok((await cp.admin.core.readNode({ name: 'worker-1' })).spec?.taints?.some((t) => t.key === QUARANTINE_TAINT), 'still quarantined');
    // The operator accepts the new boot: PCR 9's new value goes into the cluster's config.
    const pcr9 = Buffer.from((await c.pcrRead([9])).get(9)!).toString('hex');
    const accepted = { ...measurements, '9': { expected: pcr9, warnOnly: false } };
    assert.equal((await run((a, o) => configCommand(a, o), ['apply', '--variant=qemu-vtpm', `--attestation-config=${configFile(accepted, 'accepted.json')}`, '--force'])).code, 0);
    const ok = await run((a, o) => nodeCommand(a, o), args);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /worker-1 passed attestation and is readmitted \(1 deny-list entries removed, taint removed\)/);
    assert.equal((await cp.admin.core.readNode({ name: 'worker-1' })).spec?.taints?.some((t) => t.key === QUARANTINE_TAINT) ?? false, false);
    assert.deepEqual(await new DenyListStore(cp.admin.core).list(), []);
  });

  it('node readmit of a rebooted node awaiting its rejoin (PCR 15 unmarked): accepted with its own attestation key, refused with another vTPM', async () => {
    assert.equal((await run((a, o) => nodeCommand(a, o), ['quarantine', 'worker-1', '--reason=reboot test'])).code, 0);
    // The same boot on another machine: same PCRs, no mark, a different attestation key.
    const other = await startSwtpm();
    const otherServer = await startVerifyServer(new QemuVtpmIssuer(() => other.client(), async () => MIN_EVENT_LOG));
    try {
      await bootAsBefore(await other.client());
      const args = (endpoint: string) => ['readmit', 'worker-1', `--endpoint=${endpoint}`, `--cluster-id=${clusterId.toString('hex')}`];
      const stranger = await run((a, o) => nodeCommand(a, o), args(otherServer.endpoint));
      assert.equal(stranger.code, 1);
      assert.match(stranger.stderr, /still fails: ClusterMarkMismatch \(PCR\[15\]\)/);
      // worker-1's own vTPM after a reboot: the same boot, PCR 15 back to zeros.
      await tpm.reboot();
      await bootAsBefore(await tpm.client());
      const ok = await run((a, o) => nodeCommand(a, o), args(server.endpoint));
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stdout, /worker-1 passed attestation \(not marked yet: booted, awaiting its rejoin\) and is readmitted \(1 deny-list entries removed, taint removed\)/);
      assert.deepEqual(await new DenyListStore(cp.admin.core).list(), []);
    } finally {
      await otherServer.stop();
      await other.stop();
    }
  });
});

/** The measured boot worker-1 had when the config last accepted it (PCR 4 kernel, PCR 9 the changed initrd). */
async function bootAsBefore(c: TpmClient): Promise<void> {
  await c.pcrExtend(4, [{ hashAlg: TPM_ALG.SHA256, digest: sha256('kernel') }]);
  await c.pcrExtend(9, [{ hashAlg: TPM_ALG.SHA256, digest: sha256('changed initrd') }]);
}
