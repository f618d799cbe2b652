/**
 * The bootstrapper and CLI processes as a user runs them, on one node with a swtpm vTPM, a LUKS2
 * image and the local backend (real etcd/kube-apiserver): `asterism verify` names a changed PCR,
 * a wrong init secret yields the failure and the node's log chunks, two concurrent inits give
 * exactly one cluster (the other: FailedPrecondition), the kubeconfig works, and the init bound the
 * node's disk to the attestation key of its swtpm (docs/adr/0008).
 */
import assert from 'node:assert/strict';
import { spawn, execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import * as k8s from '@kubernetes/client-node';
import { attestationKeyDigest, Variant } from '@asterism/attestation';
import { BINDING_NAMESPACE, identityBindingName } from '@asterism/k8s';
import { verify } from '@asterism/proto';
import { controlPlaneBinaries, testenvUnavailable } from '@asterism/k8s-testenv';
import { kubectlBinary, missingComponent, WORKSPACE_ROOT } from '@asterism/testing';
import {
  attestationConfigJson,
  ClusterLayout,
  createHostKey,
  createStateDisk,
  expectedBootPcrs,
  measureBoot,
  newInitSecret,
  planNodes,
  readNodeStatus,
  startBootstrapper,
  startSwtpm,
  stopDetached,
  writeMetadataFile,
  type DetachedProcess,
} from '@asterism/local-cluster';
import type { ServerRefusals } from './status-file.js';

const tools = ['swtpm', 'cryptsetup', 'ssh-keygen'].filter((t) => spawnSync('which', [t]).status !== 0);
const skip = testenvUnavailable() || (tools.length ? missingComponent(tools.join(', '), 'bash tools/scripts/setup.sh') : false);

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(WORKSPACE_ROOT, 'apps/cli/src/main.ts'), ...args], { cwd: WORKSPACE_ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe('bootstrapper + cli processes on one node', { skip }, () => {
  const root = mkdtempSync(join(tmpdir(), 'bootstrapper-int-'));
  const layout = new ClusterLayout(root);
  const [node] = planNodes(1, 0, '127.43.0');
  let swtpm: DetachedProcess;
  let bootstrapper: DetachedProcess;
  let secret: string;
  /** Admin kubeconfig of the cluster the successful init created. */
  let kubeconfig: string | undefined;

  before(async () => {
    await mkdir(layout.nodeRoot(node!.name), { recursive: true });
    await mkdir(layout.workspace, { recursive: true });
    const s = await newInitSecret();
    secret = s.secret;
    writeFileSync(layout.initSecretFile, secret);
    writeFileSync(join(root, 'wrong-secret'), 'x'.repeat(32));
    await writeMetadataFile(layout.metadataFile, [node!], s.hash);
    writeFileSync(layout.attestationConfigFile, attestationConfigJson());
    swtpm = await startSwtpm(layout, node!.name);
    await measureBoot(layout.tpmSocket(node!.name));
    await createStateDisk(layout, node!.name);
    await createHostKey(layout, node!.name);
    bootstrapper = startBootstrapper(layout, node!, join(controlPlaneBinaries().kubeadm, '..'), true);
    // Wait for the init port.
    for (let i = 0; i < 200; i++) {
      if ((await readNodeStatus(layout, node!.name))?.phase === 'waiting') break;
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  after(async () => {
    await stopDetached(bootstrapper.pid, 15_000);
    await stopDetached(swtpm.pid, 5_000);
  });

  it('asterism verify shows which PCR differs, expected vs actual, and refuses the node', async () => {
    const good = await cli(['verify', `--node=${node!.ip}`, '--variant=qemu-vtpm', `--attestation-config=${layout.attestationConfigFile}`]);
    assert.equal(good.code, 0, good.stderr + good.stdout);
    assert.match(good.stdout, /All enforced measurements match/);
    const bad = JSON.parse(attestationConfigJson()) as { measurements: Record<string, { expected: string }> };
    bad.measurements['9']!.expected = 'ee'.repeat(32);
    const badFile = join(root, 'bad-attestation.json');
    writeFileSync(badFile, JSON.stringify(bad));
    const r = await cli(['verify', `--node=${node!.ip}`, '--variant=qemu-vtpm', `--attestation-config=${badFile}`]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, / {2}9 {2}MISMATCH +expected (ee){32}\n +actual +([0-9a-f]{64})/);
    assert.ok(r.stdout.includes(`actual   ${expectedBootPcrs().get(9)!.toString('hex')}`));
    assert.match(r.stdout, /differ at PCR 9/);
    assert.match(r.stdout, /refused/);
  });

  it('a wrong init secret yields the failure message and none of the node\'s log', async () => {
    const r = await cli(['init', `--endpoint=${node!.ip}`, `--workspace=${join(root, 'ws-wrong')}`, `--init-secret-file=${join(root, 'wrong-secret')}`, '--variant=qemu-vtpm', `--attestation-config=${layout.attestationConfigFile}`, '--skip-helm']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Init failed on the node: rpc error: code = PermissionDenied desc = invalid init secret/);
    assert.doesNotMatch(r.stderr, /Node logs follow:/);
    assert.doesNotMatch(r.stderr, /"msg":"bootstrapper starting"/, 'the node log is only for callers who know the init secret');
    // The InitServer's counters reach the status file (rewritten every 10 s while they change).
    let refusals: ServerRefusals | undefined;
    for (let i = 0; i < 150 && !(refusals && refusals.atlsAdmitted >= 1); i++) {
      refusals = ((await readNodeStatus(layout, node!.name)) as { refusals?: Record<string, ServerRefusals> } | undefined)?.refusals?.initServer;
      await new Promise((res) => setTimeout(res, 100));
    }
    assert.ok(refusals && refusals.atlsAdmitted >= 1, `status file refusals: ${JSON.stringify(refusals)}`);
    assert.equal(refusals.initSecretAttemptsRefused, 0, 'one wrong secret is within the per-address budget');
  });

  it('two concurrent inits: exactly one cluster, the other gets FailedPrecondition; the kubeconfig works', async () => {
    const args = (ws: string) => ['init', `--endpoint=${node!.ip}`, `--workspace=${join(root, ws)}`, `--init-secret-file=${layout.initSecretFile}`, '--variant=qemu-vtpm', `--attestation-config=${layout.attestationConfigFile}`, '--cluster-name=race', '--timeout=20', '--skip-helm'];
    const [a, b] = await Promise.all([cli(args('ws-a')), cli(args('ws-b'))]);
    const results = [a, b];
    const winners = results.filter((x) => x.code === 0);
    assert.equal(winners.length, 1, results.map((x) => x.stderr).join('\n----\n'));
    const loser = results.find((x) => x.code !== 0)!;
    // The loser either reaches the node while the winner holds the lock (FailedPrecondition), or
    // attests after the winner marked PCR 15, which the CLI's attestation config refuses.
    assert.match(loser.stderr, /FailedPrecondition desc = node is already being activated|already being activated|PCR\[15\] expected 0{8}/);
    kubeconfig = winners[0]!.stdout.trim();
    assert.equal(execFileSync(kubectlBinary(), ['--kubeconfig', kubeconfig, 'get', '--raw', '/readyz']).toString().trim(), 'ok');
    const id = JSON.parse(readFileSync(join(kubeconfig, '..', 'asterism-id.json'), 'utf8')) as { clusterID: string };
    for (let i = 0; i < 100 && (await readNodeStatus(layout, node!.name))?.phase !== 'initialized'; i++) await new Promise((r) => setTimeout(r, 100));
    const want = createHash('sha256').update(Buffer.alloc(32)).update(createHash('sha256').update(Buffer.from(id.clusterID, 'base64')).digest()).digest('hex');
    assert.equal((await readNodeStatus(layout, node!.name))?.pcr15, want);
  });

  it("after init the node's disk is bound: the ConfigMap names the disk, the node, ControlPlane and the AK digest of a document issued on the node's swtpm", async () => {
    assert.ok(kubeconfig, 'the init above succeeded');
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfig);
    const diskUuid = execFileSync('cryptsetup', ['luksUUID', layout.diskImage(node!.name)]).toString().trim().toLowerCase();
    const cm = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedConfigMap({ namespace: BINDING_NAMESPACE, name: identityBindingName(diskUuid) });
    assert.equal(cm.immutable, true);
    const { akDigest, createdAt, ...rest } = cm.data ?? {};
    assert.deepEqual(rest, { diskUuid, nodeName: node!.name, role: 'ControlPlane' });
    assert.ok(Date.parse(createdAt ?? '') > 0, `createdAt ${createdAt}`);
    // A fresh document from the node's verification service: issued by the bootstrapper on the node's swtpm.
    const client = new verify.APIClient(`${node!.ip}:30081`, grpc.credentials.createInsecure());
    const document = await new Promise<Buffer>((resolve, reject) => client.getAttestation({ nonce: Buffer.alloc(32, 7) }, (err, res) => (err ? reject(err) : resolve(res!.attestation))));
    client.close();
    assert.match(akDigest ?? '', /^sha256:[0-9a-f]{64}$/);
    assert.equal(akDigest, attestationKeyDigest(Variant.fromString('qemu-vtpm'), document));
    // The stage is timed like every init step; the figures of all steps go to the test output.
    const steps = readFileSync(layout.log(node!.name, 'bootstrapper.json'), 'utf8').split('\n').filter((l) => l.includes('"init step finished')).map((l) => JSON.parse(l) as { msg: string; step: string; durationMs: number });
    assert.deepEqual(steps.filter((l) => l.step === 'binding disk to attestation key').map((l) => l.msg), ['init step finished']);
    process.stdout.write(`# [init-binding] ${JSON.stringify(Object.fromEntries(steps.map((l) => [l.step, l.durationMs])))}\n`);
  });
});
