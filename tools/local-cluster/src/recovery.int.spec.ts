/**
 * End-to-end on the local backend (issue 23): verifying running nodes through their verification
 * service, and a full control-plane outage recovered with `asterism recover`
 * (docs/protocol/recovery.md, docs/protocol/verification.md). Real swtpm vTPMs, LUKS2 state disk
 * images, bootstrapper and CLI processes.
 *
 * What this backend proves of recovery is the unlock: every node waits, a wrong master secret
 * changes nothing, `recover` opens each disk with its unchanged key and PCR 15 is re-marked with
 * the same cluster ID. The worker is unlocked by `recover` too, and the local backend does not
 * restart its control plane afterwards, so the cluster being usable again (kubectl) and the
 * worker rejoining through the joinservice on its own are proved on real nodes by
 * tools/local-cluster/src/real/recovery-real.int.spec.ts.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ClusterKms, STATE_DISK_KEY_LENGTH, stateDiskKeyId } from '@asterism/crypto';
import { controlPlaneBinaries, testenvUnavailable } from '@asterism/k8s-testenv';
import { eventually, findSecretLeaks, missingComponent } from '@asterism/testing';
import { down, readNodeStatus, readState, rebootNode, TSX, up, WORKSPACE_ROOT, writeState } from './cluster.js';
import { ClusterLayout } from './layout.js';

const tools = ['swtpm', 'cryptsetup', 'ssh-keygen'].filter((t) => spawnSync('which', [t]).status !== 0);
const skip = testenvUnavailable() || (tools.length ? missingComponent(tools.join(', '), 'bash tools/scripts/setup.sh') : false);

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', TSX, join(WORKSPACE_ROOT, 'apps/cli/src/main.ts'), ...args], { cwd: WORKSPACE_ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe('local cluster: verify running nodes, recover a full control-plane outage', { skip }, () => {
  const root = mkdtempSync(join(tmpdir(), 'asterism-recovery-'));
  const layout = new ClusterLayout(root);
  const ip = { cp: '127.42.0.10', worker: '127.42.0.11' };
  const att = () => ['--variant=qemu-vtpm', `--attestation-config=${layout.attestationConfigFile}`];
  const masterFile = () => join(layout.workspace, 'asterism-mastersecret.json');
  const clusterId = () => (JSON.parse(readFileSync(join(layout.workspace, 'asterism-id.json'), 'utf8')) as { clusterID: string }).clusterID;
  const master = () => {
    const m = JSON.parse(readFileSync(masterFile(), 'utf8')) as { key: string; salt: string };
    return { key: Buffer.from(m.key, 'base64'), salt: Buffer.from(m.salt, 'base64') };
  };
  const diskKey = (node: string) => new ClusterKms(master()).getDek(stateDiskKeyId(execFileSync('cryptsetup', ['luksUUID', layout.diskImage(node)]).toString().trim()), STATE_DISK_KEY_LENGTH);
  const opens = (node: string, key: Buffer) => spawnSync('cryptsetup', ['open', '--test-passphrase', '--key-file=-', layout.diskImage(node)], { input: key }).status === 0;
  /** SHA-256 of the LUKS2 header area (16 MiB): any keyslot or token write changes it. */
  const header = (node: string) => createHash('sha256').update(readFileSync(layout.diskImage(node)).subarray(0, 16 << 20)).digest('hex');
  const consoleText: string[] = [];

  before(async () => {
    await up({ root, controlPlanes: 1, workers: 1, binDir: join(controlPlaneBinaries().kubeadm, '..'), progress: (l) => process.stderr.write(`[recovery-e2e] ${l}\n`), timeoutMs: 180_000 });
  });
  after(async () => {
    await down(root);
    const leftovers = execFileSync('ps', ['-eo', 'pid,args']).toString().split('\n').filter((l) => l.includes(root));
    assert.deepEqual(leftovers, [], 'no process of the cluster survives down');
    assert.equal(existsSync(root), false);
  });

  it('verify --endpoint: right cluster ID accepted (exit 0), wrong one refused (exit 1), -o json and -o raw', async () => {
    const good = await cli(['verify', `--endpoint=${ip.worker}`, `--cluster-id=${clusterId()}`, ...att()]);
    consoleText.push(good.stdout, good.stderr);
    assert.equal(good.code, 0, good.stdout + good.stderr);
    assert.match(good.stdout, /All enforced measurements match/);
    assert.match(good.stdout, /Cluster ID \(PCR 15\): matches/);
    assert.match(good.stdout, /belongs to the given cluster: accepted/);

    const wrongId = Buffer.alloc(32, 0x5a).toString('base64');
    const bad = await cli(['verify', `--endpoint=${ip.worker}`, `--cluster-id=${wrongId}`, ...att()]);
    assert.equal(bad.code, 1, bad.stdout + bad.stderr);
    assert.match(bad.stdout, /Cluster ID \(PCR 15\): MISMATCH/);
    assert.match(bad.stdout, /does not carry the given cluster ID/);

    const json = await cli(['verify', `--endpoint=${ip.cp}:30081`, `--cluster-id=${clusterId()}`, '-o', 'json', ...att()]);
    assert.equal(json.code, 0, json.stderr);
    const parsed = JSON.parse(json.stdout) as { accepted: boolean; clusterId: { ok: boolean }; measurements: Array<{ index: number; status: string }> };
    assert.equal(parsed.accepted, true);
    assert.equal(parsed.clusterId.ok, true);
    assert.ok(parsed.measurements.some((m) => m.index === 9 && m.status === 'ok'));

    const raw = await cli(['verify', `--endpoint=${ip.cp}`, '-o', 'raw', ...att()]);
    assert.equal(raw.code, 0, raw.stderr);
    assert.ok('Attestation' in (JSON.parse(raw.stdout) as object), 'raw is the attestation document');
  });

  it('verify --endpoint: bad input has a clear message and exit code', async () => {
    const cases: Array<[string, string[], number, RegExp]> = [
      ['unreachable node', [`--endpoint=127.42.0.250:30081`, '--timeout=3'], 3, /no attestation from the verification service at 127\.42\.0\.250:30081/],
      ['malformed cluster ID', [`--endpoint=${ip.worker}`, '--cluster-id=xyz'], 2, /invalid --cluster-id/],
      ['unknown output', [`--endpoint=${ip.worker}`, '-o', 'yaml'], 2, /unknown --output "yaml"/],
      ['both targets', [`--endpoint=${ip.worker}`, `--node=${ip.worker}`], 2, /exactly one of --endpoint/],
    ];
    for (const [name, args, code, message] of cases) {
      const r = await cli(['verify', ...args, ...att()]);
      assert.equal(r.code, code, `${name}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, message, name);
    }
  });

  it('verify --endpoint: a node whose PCR 9 differs from the expected value is refused, naming PCR 9', async () => {
    // The difference is put on the expected side (a PCR extended on a running node's vTPM:
    // verification-cli.int.spec.ts); a node booted with a tampered PCR 9 is refused by recover below.
    const expected = JSON.parse(readFileSync(layout.attestationConfigFile, 'utf8')) as { measurements: Record<string, { expected: string }> };
    expected.measurements['9']!.expected = 'ee'.repeat(32);
    const file = join(root, 'other-pcr9.json');
    writeFileSync(file, JSON.stringify(expected));
    const r = await cli(['verify', `--endpoint=${ip.worker}`, `--cluster-id=${clusterId()}`, '--variant=qemu-vtpm', `--attestation-config=${file}`]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, / {2}9 {2}MISMATCH +expected (ee){32}/);
    assert.match(r.stdout, /is refused/);
  });

  it('full control-plane outage (unlock and PCR 15 only; kubectl and the worker\'s rejoin: real-node spec): nodes wait for recovery; a wrong master secret is refused and writes nothing; recover unlocks every node with its unchanged disk key', async () => {
    const before = { cp: await readNodeStatus(layout, 'control-plane-0'), worker: await readNodeStatus(layout, 'worker-0') };
    const keys = { cp: diskKey('control-plane-0'), worker: diskKey('worker-0') };
    // Every node goes down (the control plane first, so no joinservice is left for the worker).
    // One after the other: rebootNode rewrites the cluster state file.
    await rebootNode(root, 'control-plane-0');
    await rebootNode(root, 'worker-0');
    for (const n of ['control-plane-0', 'worker-0']) {
      await eventually(`${n} waits for its disk key`, async () => ((await readNodeStatus(layout, n))?.phase === 'waiting' ? true : undefined));
    }
    const headers = { cp: header('control-plane-0') };

    const wrongFile = join(root, 'wrong-mastersecret.json');
    writeFileSync(wrongFile, JSON.stringify({ key: Buffer.alloc(32, 1).toString('base64'), salt: master().salt.toString('base64') }));
    const wrong = await cli(['recover', `--endpoint=${ip.cp}`, `--master-secret=${wrongFile}`, '--timeout=60', ...att()]);
    consoleText.push(wrong.stdout, wrong.stderr);
    assert.equal(wrong.code, 1, wrong.stdout + wrong.stderr);
    assert.match(wrong.stdout, /FAILED \(KEY_REFUSED\): the node refused the master secret: .*does not open the node's state disk/);
    assert.equal(header('control-plane-0'), headers.cp, 'nothing written to the LUKS header');
    assert.equal((await readNodeStatus(layout, 'control-plane-0'))?.phase, 'waiting', 'still waiting, not marked');

    const t = Date.now();
    const ok = await cli(['recover', `--endpoint=${ip.cp}`, `--endpoint=${ip.worker}:9999`, `--master-secret=${masterFile()}`, '--timeout=60', ...att()]);
    consoleText.push(ok.stdout, ok.stderr);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, new RegExp(`${ip.cp.replaceAll('.', '\\.')}:9999\\trecovered`));
    for (const [n, prev] of [['control-plane-0', before.cp], ['worker-0', before.worker]] as const) {
      const s = await eventually(`${n} unlocked`, async () => {
        const st = await readNodeStatus(layout, n);
        if (st?.phase === 'failed') throw new Error(st.error);
        return st?.phase === 'rejoined' ? st : undefined;
      });
      assert.equal(s.pcr15, prev?.pcr15, `${n}: PCR 15 re-marked with the same cluster ID`);
    }
    process.stderr.write(`[recovery-e2e] recover of 2 nodes took ${Date.now() - t} ms\n`);
    assert.equal(opens('control-plane-0', keys.cp), true, 'control-plane-0 disk key unchanged');
    assert.equal(opens('worker-0', keys.worker), true, 'worker-0 disk key unchanged');

    // A recovered node's bootstrapper has nothing left to supervise (the local backend restarts no
    // control plane after an outage): it hands the verification service over and exits, so no
    // recovery server answers any more, as on a real node (recovery-real.int.spec.ts).
    const again = await cli(['recover', `--endpoint=${ip.cp}`, `--master-secret=${masterFile()}`, '--timeout=5', ...att()]);
    assert.equal(again.code, 3, `a recovered node serves no recovery endpoint: ${again.stdout}`);
    assert.match(again.stdout, /FAILED \(NODE_UNREACHABLE\): no recovery server reachable after \d+ attempts/);

    const m = master();
    const leaks = findSecretLeaks(consoleText.join('\n'), [{ name: 'master key', value: m.key }, { name: 'master salt', value: m.salt }, { name: 'cp disk key', value: keys.cp }]);
    assert.deepEqual(leaks, []);
  });

  it('recover refuses a node booted with a tampered PCR 9 (attestation failure, exit 1) and sends nothing', async () => {
    const state = (await readState(layout))!;
    state.nodes.find((n) => n.name === 'worker-0')!.tampered = true;
    await writeState(layout, state);
    await rebootNode(root, 'worker-0');
    await eventually('worker-0 waits for its disk key', async () => ((await readNodeStatus(layout, 'worker-0'))?.phase === 'waiting' ? true : undefined));
    const headerBefore = header('worker-0');
    const r = await cli(['recover', `--endpoint=${ip.worker}`, `--master-secret=${masterFile()}`, '--timeout=60', ...att()]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /FAILED \(ATTESTATION_FAILED\): the node failed attestation: .*PCR 9|FAILED \(ATTESTATION_FAILED\).*9/);
    assert.equal(header('worker-0'), headerBefore);
    assert.equal((await readNodeStatus(layout, 'worker-0'))?.phase, 'waiting');
  });
});
