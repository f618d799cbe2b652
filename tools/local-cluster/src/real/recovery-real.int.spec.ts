/**
 * Issue 23 on real nodes (kubeadm backend, docs/adr/0019-node-runtime.md): `asterism verify`
 * against the verification service of running nodes, served by the chart's DaemonSet pod on each
 * node through NodePort 30081 while the nodes' bootstrappers have exited (docs/adr/0028): right /
 * wrong cluster ID on a control plane and a worker, a PCR changed on the running worker's vTPM;
 * and a full outage of every control plane recovered with `asterism recover`
 * (docs/protocol/recovery.md), served by the rebooted nodes' bootstrappers: a wrong master secret
 * is refused and writes nothing; the right one unlocks every control plane with its unchanged
 * disk key, kubectl works again and the rebooted worker rejoins through the joinservice on its
 * own. One cluster of 2 control planes (etcd needs both back for quorum) + 1 worker, prepared for
 * VM nodes (the image's measurements are the cluster's), with the VM worker scenario
 * (./e2e/vm-checks.ts, docs/adr/0039-vm-nodes-local-cluster.md): a QEMU VM of the node image joins
 * and runs pods, its marker is only on the mapped device, a second VM with a changed kernel
 * command line is refused (beside the first one's join), a reboot rejoins, and in the full
 * outage the VM is unlocked by `asterism recover` before the control planes are. The CLI runs in
 * the router namespace of the private network, as an operator's machine on the nodes' network
 * would.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ClusterKms, STATE_DISK_KEY_LENGTH, stateDiskKeyId } from '@asterism/crypto';
import { binDir, K8S_VERSION } from '@asterism/k8s-testenv';
import { eventually, findSecretLeaks, kubectlBinary } from '@asterism/testing';
import { SocketTransport, TPM_ALG, TpmClient } from '@asterism/tpm';
import { ClusterLayout } from '../layout.js';
import { downReal, upReal, VERIFY_GRPC_PORT } from './real-cluster.js';
import { namespaceExists, NETWORK } from './network.js';
import { isBootstrapper, isVerificationService, nodeProcesses, realNodesUnavailable, residentMiB } from './test-support.js';
import { rebootRealNodes } from './faults.js';
import { setMonitorTiming } from './e2e/attestation-support.js';
import { RealClusterContext } from './e2e/context.js';
import { bootVmWorker, markerOnlyOnMappedDevice, powerCycleForOutage, rebootRejoins, recoverVm, tamperedVmRefused, vmBackAfterOutage, vmConsoles, vmJoinsAndIsReady, vmRunsImageKernel, VM_NODE, operatorCli, recoverWithCli, type VmBeforeOutage } from './e2e/vm-checks.js';

const skip = realNodesUnavailable();
const IP = { cp0: '10.42.0.10', cp1: '10.42.0.11', worker: '10.42.0.12' };
const CONTROL_PLANES = ['control-plane-0', 'control-plane-1'];
const NODES = [...CONTROL_PLANES, 'worker-0'];

/** The CLI as an operator on the nodes' network runs it (inside the router namespace). */
const cli = operatorCli;

describe('local cluster, kubeadm backend: verify running nodes, recover a full control-plane outage', { skip }, () => {
  const root = mkdtempSync(join(tmpdir(), 'asterism-real-recovery-'));
  const layout = new ClusterLayout(root);
  const log = (l: string) => process.stderr.write(`[real-recovery] ${l}\n`);
  const att = () => ['--variant=qemu-vtpm', `--attestation-config=${layout.attestationConfigFile}`];
  const masterFile = () => join(layout.workspace, 'asterism-mastersecret.json');
  const clusterId = () => (JSON.parse(readFileSync(join(layout.workspace, 'asterism-id.json'), 'utf8')) as { clusterID: string }).clusterID;
  const master = () => {
    const m = JSON.parse(readFileSync(masterFile(), 'utf8')) as { key: string; salt: string };
    return { key: Buffer.from(m.key, 'base64'), salt: Buffer.from(m.salt, 'base64') };
  };
  const diskKey = (node: string) => new ClusterKms(master()).getDek(stateDiskKeyId(execFileSync('cryptsetup', ['luksUUID', layout.diskImage(node)]).toString().trim().toLowerCase()), STATE_DISK_KEY_LENGTH);
  const opens = (node: string, key: Buffer) => spawnSync('cryptsetup', ['open', '--test-passphrase', '--key-file=-', layout.diskImage(node)], { input: key }).status === 0;
  /** SHA-256 of the LUKS2 header area (16 MiB): any keyslot or token write changes it. */
  const header = (node: string) => createHash('sha256').update(readFileSync(layout.diskImage(node)).subarray(0, 16 << 20)).digest('hex');
  const status = (node: string) => (existsSync(layout.nodeStatus(node)) ? (JSON.parse(readFileSync(layout.nodeStatus(node), 'utf8')) as { phase: string; pcr15?: string; error?: string; bootstrapMs?: number }) : undefined);
  const kubectl = (...args: string[]) => execFileSync(kubectlBinary(), ['--kubeconfig', layout.hostKubeconfig, '--request-timeout=5s', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const consoleText: string[] = [];
  /** The node's verification-service pod is Ready (the NodePort has a local endpoint) and answers for the cluster. */
  const verifies = async (ip: string) => (await cli(['verify', `--endpoint=${ip}`, `--cluster-id=${clusterId()}`, '--timeout=5', ...att()])).code === 0;
  /** Every node's bootstrapper has exited (only the local backend keeps it as the node's agent). */
  const bootstrappersGone = async () => (NODES.every((n) => nodeProcesses(n, isBootstrapper).length === 0) ? true : undefined);

  const ctx = new RealClusterContext(root, log);
  /** The VM worker: QEMU start, the tampered VM's refusal (settled, run beside the join), the marker. */
  const vm: { started: number; tampered?: Promise<{ s?: number; err?: unknown }>; marker?: string } = { started: 0 };

  before(async () => {
    await eventually("the machine's local-cluster network is free", async () => (namespaceExists(NETWORK.routerNamespace) ? undefined : true), 900_000);
    const started = Date.now();
    await upReal({ root, controlPlanes: 2, workers: 1, binDir: binDir(), kubernetesVersion: K8S_VERSION, vmReady: true, progress: log });
    log(`up --backend kubeadm --control-planes 2 --workers 1 (prepared for VM nodes) took ${((Date.now() - started) / 1000).toFixed(1)} s`);
    // A VM's verification-service pod is away while it reboots (minutes under TCG): the monitor's
    // grace outlasts that, so the VM steps are not cut short by a quarantine (ADR 0039).
    setMonitorTiming(ctx, 20, 3600);
    // The VM boots during the tests below (QEMU start to Ready takes minutes under TCG).
    vm.started = await bootVmWorker(ctx);
    vm.tampered = tamperedVmRefused(ctx).then((s) => ({ s }), (err: unknown) => ({ err }));
  });

  after(async () => {
    await downReal(root);
    const procs = execFileSync('ps', ['-eo', 'pid,args']).toString().split('\n').filter((l) => l.includes(root));
    assert.deepEqual(procs, [], 'no process of the cluster survives down');
    assert.equal(existsSync(root), false);
  });

  it("after bootstrapping, each node's bootstrapper has exited and the chart's verification-service pod serves the node (idle memory logged)", async () => {
    await eventually('every bootstrapper exited', bootstrappersGone, 60_000);
    for (const n of NODES) {
      assert.match(status(n)?.phase ?? '', /^(initialized|joined)$/, `${n} bootstrapped`);
      assert.match(readFileSync(layout.log(n, 'bootstrapper.json'), 'utf8'), /bootstrapper exiting: nothing left to supervise on this node/);
    }
    const pods = await eventually('a Ready verification-service pod on every node', async () => {
      const list = JSON.parse(kubectl('-n', 'kube-system', 'get', 'pods', '-l', 'k8s-app=verification-service', '-o', 'json')) as { items: Array<{ spec: { nodeName: string }; status: { containerStatuses?: Array<{ ready: boolean }> } }> };
      const ready = list.items.filter((p) => p.status.containerStatuses?.every((c) => c.ready)).map((p) => p.spec.nodeName).sort();
      const ours = ready.filter((n) => NODES.includes(n));
      return ours.length === NODES.length ? ours : undefined;
    }, 180_000);
    assert.deepEqual(pods, [...NODES].sort());
    await eventually('every node answers verify through its NodePort', async () => ((await Promise.all(Object.values(IP).map(verifies))).every(Boolean) ? true : undefined), 120_000);
    await new Promise((r) => setTimeout(r, 5000));
    const idle = NODES.map((n) => {
      const procs = nodeProcesses(n, isVerificationService);
      assert.equal(procs.length, 1, `one verification-service process on ${n}`);
      assert.ok(procs[0]!.args.includes('--tpm=unix:/run/asterism/swtpm.sock'), procs[0]!.args.join(' '));
      return `${n} ${residentMiB(procs[0]!.pid).toFixed(1)} MiB`;
    });
    log(`verification-service pod idle RSS per node (after a few documents): ${idle.join(', ')}`);
  });

  it('verify --endpoint on a running real node: right cluster ID accepted (0), wrong one refused (1), -o json, unreachable node (3)', async () => {
    const good = await cli(['verify', `--endpoint=${IP.worker}`, `--cluster-id=${clusterId()}`, ...att()]);
    consoleText.push(good.stdout, good.stderr);
    assert.equal(good.code, 0, good.stdout + good.stderr);
    assert.match(good.stdout, /Cluster ID \(PCR 15\): matches/);
    assert.match(good.stdout, /belongs to the given cluster: accepted/);

    const bad = await cli(['verify', `--endpoint=${IP.cp1}`, `--cluster-id=${Buffer.alloc(32, 0x5a).toString('base64')}`, ...att()]);
    assert.equal(bad.code, 1, bad.stdout + bad.stderr);
    assert.match(bad.stdout, /Cluster ID \(PCR 15\): MISMATCH/);
    assert.match(bad.stdout, /does not carry the given cluster ID/);

    const json = await cli(['verify', `--endpoint=${IP.cp0}:${VERIFY_GRPC_PORT}`, `--cluster-id=${clusterId()}`, '-o', 'json', ...att()]);
    assert.equal(json.code, 0, json.stderr);
    const parsed = JSON.parse(json.stdout) as { accepted: boolean; clusterId: { ok: boolean }; measurements: Array<{ index: number; status: string }> };
    assert.equal(parsed.accepted, true);
    assert.equal(parsed.clusterId.ok, true);
    assert.deepEqual(parsed.measurements.filter((m) => [4, 9, 11].includes(m.index)).map((m) => m.status), ['ok', 'ok', 'ok']);

    const gone = await cli(['verify', '--endpoint=10.42.0.250', '--timeout=3', ...att()]);
    assert.equal(gone.code, 3, gone.stdout + gone.stderr);
    assert.match(gone.stderr, /no attestation from the verification service at 10\.42\.0\.250:30081/);
  });

  it("a VM worker of the node image joins: attested with the image's PCRs, components installed onto its dm-crypt + dm-integrity state disk, Ready; -o wide shows the image's kernel and containerd", async () => {
    const t = await vmJoinsAndIsReady(ctx, vm.started);
    const { qemuRssMiB } = vmRunsImageKernel(ctx);
    log(`VM worker: QEMU start to bootstrapper joining ${t.bootToBootstrapperS} s, then to Node Ready ${t.bootstrapperToReadyS} s; QEMU RSS ${qemuRssMiB} MiB`);
  });

  it("a pod's marker on the VM: absent from the raw state disk read on the host, found on /dev/mapper/state inside the VM", async () => {
    vm.marker = await markerOnlyOnMappedDevice(ctx);
  });

  it('a VM booted from the image with a changed kernel command line is refused by the joinservice, naming the PCR (run beside the join)', async () => {
    const r = await vm.tampered!;
    if (r.err) throw r.err;
    log(`tampered VM refused ${r.s} s after its QEMU started`);
  });

  it('the VM worker rebooted (orderly): rejoin ticket for the same disk UUID, the same key opens it, nothing refetched, the marker read back', async () => {
    const s = await rebootRejoins(ctx, vm.marker!);
    log(`VM worker: reboot (power button) to Ready ${s} s`);
  });

  it('full outage of every node (the VM too): a wrong master secret is refused and writes nothing; recover brings the cluster back with unchanged disk keys (the VM first, with its data); the worker rejoins', async () => {
    const nodes = [...CONTROL_PLANES, 'worker-0'];
    const before = Object.fromEntries(nodes.map((n) => [n, { pcr15: status(n)?.pcr15, key: diskKey(n) }]));
    kubectl('get', 'nodes');

    const outage = Date.now();
    const vmBefore: VmBeforeOutage = await powerCycleForOutage(ctx, vm.marker!);
    await rebootRealNodes(root, nodes);
    for (const n of nodes) await eventually(`${n} waits for its disk key`, async () => (status(n)?.phase === 'waiting' ? true : undefined), 90_000);
    const waitingAt = Date.now();
    log(`every node powered off, rebooted and waiting for its disk key ${((waitingAt - outage) / 1000).toFixed(1)} s after the outage`);
    // A real outage: the supervisor starts a kubelet from an earlier boot's configuration only after
    // the bootstrapper got this boot's disk key (node.sh), so no control plane serves meanwhile.
    const listeners = spawnSync('nsenter', ['--net=/run/netns/asterism-control-plane-0', 'ss', '-ltnpH', 'sport = :6443'], { encoding: 'utf8' }).stdout.trim();
    const apiDuringOutage = spawnSync(kubectlBinary(), ['--kubeconfig', layout.hostKubeconfig, '--request-timeout=5s', 'get', 'nodes', '-o', 'name'], { encoding: 'utf8' });
    log(`during the outage: :6443 listeners on control-plane-0: ${listeners || '(none)'}; kubectl get nodes exit ${apiDuringOutage.status}`);
    assert.equal(listeners, '', 'no API server listens while every control plane waits for its disk key');
    assert.notEqual(apiDuringOutage.status, 0, 'kubectl fails during the outage');

    const headers = { cp0: header('control-plane-0') };
    const wrongFile = join(root, 'wrong-mastersecret.json');
    writeFileSync(wrongFile, JSON.stringify({ key: Buffer.alloc(32, 1).toString('base64'), salt: master().salt.toString('base64') }));
    const wrong = await cli(['recover', `--endpoint=${IP.cp0}`, `--master-secret=${wrongFile}`, '--timeout=60', ...att()]);
    consoleText.push(wrong.stdout, wrong.stderr);
    assert.equal(wrong.code, 1, wrong.stdout + wrong.stderr);
    assert.match(wrong.stdout, /FAILED \(KEY_REFUSED\): the node refused the master secret: .*does not open the node's state disk/);
    assert.equal(header('control-plane-0'), headers.cp0, 'nothing written to the LUKS header');
    assert.equal(status('control-plane-0')?.phase, 'waiting', 'still waiting');

    // The VM first: no joinservice is up, so only `asterism recover` can unlock it.
    const vmRecoveredS = await recoverVm(ctx, async (ip) => {
      const r = await recoverWithCli(ctx, [ip], 60);
      consoleText.push(r.stdout, r.stderr);
      return r;
    });
    log(`${VM_NODE} recovered ${((Date.now() - outage) / 1000).toFixed(1)} s after the outage (key delivered ${vmRecoveredS} s after its recovery server listened)`);

    const recoverStart = Date.now();
    const ok = await cli(['recover', `--endpoint=${IP.cp0}`, `--endpoint=${IP.cp1}:9999`, `--master-secret=${masterFile()}`, '--timeout=90', ...att()]);
    consoleText.push(ok.stdout, ok.stderr);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    for (const ip of [IP.cp0, IP.cp1]) assert.match(ok.stdout, new RegExp(`${ip.replaceAll('.', '\\.')}:9999\\trecovered`));
    const recoveredAt = Date.now();
    for (const n of CONTROL_PLANES) {
      const s = await eventually(`${n} unlocked`, async () => {
        const st = status(n);
        if (st?.phase === 'failed') throw new Error(`${n}: ${st.error}`);
        return st?.phase === 'rejoined' ? st : undefined;
      }, 60_000);
      assert.equal(s.pcr15, before[n]!.pcr15, `${n}: PCR 15 re-marked with the same cluster ID`);
    }

    await eventually('kubectl works again', async () => {
      try {
        return kubectl('get', 'nodes').includes('control-plane-0') ? true : undefined;
      } catch {
        return undefined;
      }
    }, 240_000);
    const kubectlAt = Date.now();
    const worker = await eventually('worker-0 rejoined through the joinservice', async () => (status('worker-0')?.phase === 'rejoined' ? status('worker-0') : undefined), 300_000);
    const workerAt = Date.now();
    assert.equal(worker?.pcr15, before['worker-0']!.pcr15);
    await eventually('every node Ready', async () => {
      try {
        const out = JSON.parse(kubectl('get', 'nodes', '-o', 'json')) as { items: Array<{ metadata: { name: string }; status: { conditions: Array<{ type: string; status: string }> } }> };
        return nodes.every((n) => out.items.find((i) => i.metadata.name === n)?.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True')) ? true : undefined;
      } catch {
        return undefined;
      }
    }, 180_000);
    const readyAt = Date.now();
    await vmBackAfterOutage(ctx, vmBefore);
    log(`${VM_NODE} Ready with its data ${((Date.now() - outage) / 1000).toFixed(1)} s after the outage`);
    const s = (t: number) => `${((t - outage) / 1000).toFixed(1)} s`;
    log(`timings after the outage: all waiting ${s(waitingAt)}, recover started ${s(recoverStart)}, recover done ${s(recoveredAt)} (${((recoveredAt - recoverStart) / 1000).toFixed(1)} s), kubectl works ${s(kubectlAt)}, worker rejoined ${s(workerAt)}, every node Ready ${s(readyAt)}`);

    await eventually('every rejoined bootstrapper exited', bootstrappersGone, 60_000);
    for (const n of nodes) assert.equal(opens(n, before[n]!.key), true, `${n}: disk key unchanged`);
    const recovery = await cli(['recover', `--endpoint=${IP.cp0}`, `--master-secret=${masterFile()}`, '--timeout=5', ...att()]);
    assert.equal(recovery.code, 3, `a running real node serves no recovery endpoint: ${recovery.stdout}`);
    assert.match(recovery.stdout, /FAILED \(NODE_UNREACHABLE\): no recovery server reachable after \d+ attempts \(is the node up and waiting for recovery on port 9999\?\)/);

    const m = master();
    const secrets = [{ name: 'master key', value: m.key }, { name: 'master salt', value: m.salt }, { name: `${VM_NODE} disk key`, value: vmBefore.key }, ...nodes.map((n) => ({ name: `${n} disk key`, value: before[n]!.key }))];
    const logs = [...nodes.map((n) => readFileSync(layout.log(n, 'bootstrapper.json'), 'latin1')), ...vmConsoles(ctx)];
    assert.deepEqual(findSecretLeaks([...consoleText, ...logs].join('\n'), secrets), []);
  });

  it("verify --endpoint refuses a running node whose vTPM got an unexpected PCR 4 measurement, naming PCR 4; the other nodes' NodePorts still answer with their own documents", async () => {
    // After the outage the pods restart with the kubelets.
    await eventually('worker-0 and control-plane-0 verify again after the outage', async () => ((await verifies(IP.worker)) && (await verifies(IP.cp0)) ? true : undefined), 180_000);
    // The pod opens the vTPM per document, so the change is made on the node's own TPM.
    const tpm = new TpmClient(await SocketTransport.connect({ path: layout.tpmSocket('worker-0') }));
    try {
      await tpm.pcrExtend(4, [{ hashAlg: TPM_ALG.SHA256, digest: createHash('sha256').update('unexpected boot loader').digest() }]);
    } finally {
      await tpm.transport.close();
    }
    // externalTrafficPolicy Local: every call to a node's NodePort reaches that node's own pod, so
    // the worker is refused every time and the control plane accepted every time (with the
    // Service's default policy, 3 tries each would all land on the right pod 1 time in 27).
    for (let i = 0; i < 3; i++) {
      const r = await cli(['verify', `--endpoint=${IP.worker}`, `--cluster-id=${clusterId()}`, ...att()]);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stdout, / {2}4 {2}MISMATCH +expected [0-9a-f]{64}/);
      assert.match(r.stdout, /is refused/);
      assert.equal(await verifies(IP.cp0), true, 'control-plane-0 still answers with its own document');
    }
  });
});
