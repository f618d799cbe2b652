/**
 * End-to-end: the main job with real components on this machine. Three nodes (swtpm vTPMs,
 * LUKS2 state disks, bootstrapper processes), `asterism init` over aTLS, a real control plane,
 * keyservice and joinservice; then the fault scenarios of issue 10 and a clean `down`.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createPrivateKey } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { controlPlaneBinaries, testenvUnavailable } from '@asterism/k8s-testenv';
import { ClusterKms, dataKeyInfo, MEASUREMENT_SECRET_KEY_ID, SSH_CA_KEY_SUFFIX, STATE_DISK_KEY_LENGTH, stateDiskKeyId } from '@asterism/crypto';
import { eventually, findSecretLeaks, kubectlBinary, missingComponent, type NamedSecret } from '@asterism/testing';
import { addNode, down, nodeObjects, readNodeStatus, readState, rebootNode, up, waitForNodes } from './cluster.js';
import { alive } from './detached.js';
import { ClusterLayout } from './layout.js';

const tools = ['swtpm', 'cryptsetup', 'ssh-keygen'].filter((t) => spawnSync('which', [t]).status !== 0);
const skip = testenvUnavailable() || (tools.length ? missingComponent(tools.join(', '), 'bash tools/scripts/setup.sh') : false);

describe('local cluster end to end', { skip }, () => {
  const root = mkdtempSync(join(tmpdir(), 'asterism-e2e-'));
  const layout = new ClusterLayout(root);
  /** Everything an operator saw on the console (the CLI's output included). */
  const consoleLines: string[] = [];
  const log = (l: string) => {
    consoleLines.push(l);
    process.stderr.write(`[e2e] ${l}\n`);
  };
  const joinserviceLog = () => join(layout.nodeRoot('control-plane-0'), 'var/lib/asterism/services/logs/joinservice.log');
  const jsonLines = (path: string) =>
    readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  let upMs = 0;

  before(async () => {
    const t = Date.now();
    await up({ root, controlPlanes: 1, workers: 2, binDir: join(controlPlaneBinaries().kubeadm, '..'), progress: log, timeoutMs: 180_000 });
    upMs = Date.now() - t;
    log(`up took ${(upMs / 1000).toFixed(1)} s`);
  });
  after(async () => {
    const state = await readState(layout);
    await down(root);
    // Nothing of this cluster may survive: no process mentions its folder.
    const leftovers = execFileSync('ps', ['-eo', 'pid,args']).toString().split('\n').filter((l) => l.includes(root));
    assert.deepEqual(leftovers, [], 'no process of the cluster survives down');
    for (const n of state?.nodes ?? []) assert.ok(!alive(n.bootstrapper) && !alive(n.swtpm), `${n.name} stopped`);
    assert.equal(existsSync(root), false);
  });

  it('all three nodes joined; kubectl lists them; PCR 15 is the documented derivation of the cluster ID on every node', async () => {
    const names = execFileSync(kubectlBinary(), ['--kubeconfig', layout.kubeconfig, 'get', 'nodes', '-o', 'name']).toString().trim().split('\n').sort();
    assert.deepEqual(names, ['node/control-plane-0', 'node/worker-0', 'node/worker-1']);
    const id = JSON.parse(readFileSync(join(layout.workspace, 'asterism-id.json'), 'utf8')) as { clusterID: string };
    const want = createHash('sha256').update(Buffer.alloc(32)).update(createHash('sha256').update(Buffer.from(id.clusterID, 'base64')).digest()).digest('hex');
    for (const n of ['control-plane-0', 'worker-0', 'worker-1']) assert.equal((await readNodeStatus(layout, n))?.pcr15, want, n);
  });

  it('a rebooted worker rejoins with IssueRejoinTicket and re-derives the same cluster ID', async () => {
    const before = await readNodeStatus(layout, 'worker-0');
    await rebootNode(root, 'worker-0');
    const after = await eventually('worker-0 rejoined', async () => {
      const s = await readNodeStatus(layout, 'worker-0');
      if (s?.phase === 'failed') throw new Error(s.error);
      return s?.phase === 'rejoined' ? s : undefined;
    });
    assert.equal(after.pcr15, before?.pcr15);
    assert.ok(jsonLines(joinserviceLog()).some((l) => l.msg === 'rejoin ticket issued'));
  });

  it('a worker with a tampered measurement is refused, and the operator sees which PCR', async () => {
    await addNode(root, 'worker-tampered', { tamper: true });
    const refusal = await eventually('the refusal in the joinservice log', async () => jsonLines(joinserviceLog()).find((l) => l.msg === 'attestation refused'));
    assert.equal(refusal.reason, 'MEASUREMENT_MISMATCH');
    assert.match(String(refusal.error), /PCR\[9\]/);
    const serving = jsonLines(joinserviceLog()).find((l) => l.msg === 'joinservice serving')!;
    const metrics = await (await fetch(`http://127.42.0.10:${serving.metricsPort as number}/metrics`)).text();
    assert.match(metrics, /joinservice_tickets_refused_total\{kind="attestation",reason="MEASUREMENT_MISMATCH",variant="qemu-vtpm"\} [1-9]/);
    assert.ok(!(await nodeObjects(layout)).includes('worker-tampered'));
    assert.equal((await readNodeStatus(layout, 'worker-tampered'))?.phase, 'waiting');
  });

  it('joins wait while the keyservice is down and succeed when it is back; nothing is half-written', async () => {
    const pidFile = join(layout.nodeRoot('control-plane-0'), 'var/lib/asterism/services/keyservice.pid');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    process.kill(pid, 'SIGKILL');
    // The supervisor restarts it; freeze the new one so the next join meets a dead keyservice.
    const restarted = await eventually('the keyservice restarted', async () => {
      const p = Number(readFileSync(pidFile, 'utf8'));
      return p !== pid && alive(p) ? p : undefined;
    });
    process.kill(restarted, 'SIGSTOP');
    try {
      await addNode(root, 'worker-late');
      const failed = await eventually(
        'a join of worker-late failing on the keyservice',
        async () => {
          const lines = jsonLines(joinserviceLog());
          const ids = new Set(lines.filter((l) => l.msg === 'issuing join ticket' && l.nodeName === 'worker-late').map((l) => l.joinId));
          return lines.find((l) => l.msg === 'ticket failed' && ids.has(l.joinId));
        },
        90_000,
      );
      assert.equal(failed.code, 'KEYSERVICE_UNAVAILABLE');
      const lateRoot = layout.nodeRoot('worker-late');
      assert.equal((await readNodeStatus(layout, 'worker-late'))?.phase, 'waiting');
      assert.ok(!existsSync(join(lateRoot, 'run/state/constellation/node_state.json')), 'no node state before a ticket');
      assert.ok(!(await nodeObjects(layout)).includes('worker-late'));
    } finally {
      process.kill(restarted, 'SIGCONT');
    }
    await waitForNodes(layout, ['worker-late'], 90_000, log);
    const state = JSON.parse(readFileSync(join(layout.nodeRoot('worker-late'), 'run/state/constellation/node_state.json'), 'utf8')) as { Role: string };
    assert.equal(state.Role, 'Worker');
  });

  it('no secret reaches a log, a status file or the console: master secret, salt, derived keys, init secret, tokens, kubelet keys', async () => {
    const master = JSON.parse(readFileSync(join(layout.workspace, 'asterism-mastersecret.json'), 'utf8')) as { key: string; salt: string };
    const key = Buffer.from(master.key, 'base64');
    const salt = Buffer.from(master.salt, 'base64');
    const kms = new ClusterKms({ key, salt });
    const nodes = (await readState(layout))!.nodes.map((n) => n.name);
    const secrets: NamedSecret[] = [
      { name: 'master secret', value: key },
      { name: 'master salt', value: salt },
      { name: 'measurement secret', value: kms.getDek(dataKeyInfo(MEASUREMENT_SECRET_KEY_ID), 32) },
      { name: 'SSH CA seed', value: kms.getDek(dataKeyInfo(SSH_CA_KEY_SUFFIX), 32) },
      { name: 'init secret', value: readFileSync(layout.initSecretFile, 'utf8').trim() },
    ];
    for (const n of nodes) {
      const uuid = execFileSync('cryptsetup', ['luksUUID', layout.diskImage(n)]).toString().trim().toLowerCase();
      secrets.push({ name: `${n} state disk key`, value: kms.getDek(stateDiskKeyId(uuid), STATE_DISK_KEY_LENGTH) });
      const keyPath = join(layout.nodeRoot(n), 'run/state/kubelet/pki/kubelet-client-key.pem');
      if (!existsSync(keyPath)) continue; // the refused node never got one
      const pem = readFileSync(keyPath, 'utf8');
      const jwk = createPrivateKey(pem).export({ format: 'jwk' });
      secrets.push({ name: `${n} kubelet private key`, value: Buffer.from(jwk.d!, 'base64url') }, { name: `${n} kubelet key PEM`, value: pem.split('\n')[2]! });
    }
    const tokens = JSON.parse(execFileSync(kubectlBinary(), ['--kubeconfig', layout.kubeconfig, 'get', 'secrets', '-n', 'kube-system', '-o', 'json']).toString()) as { items: Array<{ type: string; data: Record<string, string> }> };
    for (const t of tokens.items.filter((i) => i.type === 'bootstrap.kubernetes.io/token')) {
      secrets.push({ name: 'bootstrap token secret', value: Buffer.from(t.data['token-secret']!, 'base64').toString() });
    }
    assert.ok(secrets.some((s) => s.name === 'bootstrap token secret'), 'the joins left bootstrap tokens to look for');

    const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => /\.log$|status\.json$/.test(f)).map((f) => join(root, f));
    assert.ok(files.length >= nodes.length * 3, `logs found: ${files.length}`);
    const leaks = [...files.map((f) => ({ where: f.slice(root.length + 1), text: readFileSync(f, 'latin1') })), { where: 'console', text: consoleLines.join('\n') }].flatMap(({ where, text }) =>
      findSecretLeaks(text, secrets).map((l) => `${l} in ${where}`),
    );
    assert.deepEqual(leaks, []);
    // The scan does see the logs: the cluster ID (public, logged on lock) is found by the same search.
    const clusterId = Buffer.from((JSON.parse(readFileSync(join(layout.workspace, 'asterism-id.json'), 'utf8')) as { clusterID: string }).clusterID, 'base64');
    assert.ok(files.some((f) => findSecretLeaks(readFileSync(f, 'latin1'), [{ name: 'cluster ID', value: clusterId }]).length > 0), 'the public cluster ID appears in some log');
  });
});
