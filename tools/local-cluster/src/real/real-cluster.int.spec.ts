/**
 * The kubeadm backend end to end (docs/adr/0019-node-runtime.md): 2 control planes + 2 workers as
 * real nodes (containerd + kubelet in their own namespaces and cgroups), `asterism init` through
 * the InitServer and the kubeadm backend, the services as Helm pods, every other node joined by
 * attestation with `kubeadm join`; a workload spread over the workers; an attested IssueJoinTicket
 * answered by the joinservice pod with a key from the keyservice pod; a worker reboot (rejoin); a
 * tampered worker refused; joins while the keyservice pods and a joinservice pod are deleted; a
 * secret scan over every log (pod logs included); a clean `down`. Needs root, the node-runtime
 * packages and tools/k8s-testenv's binaries.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import * as k8s from '@kubernetes/client-node';
import { QemuVtpmIssuer } from '@asterism/attestation';
import { atlsChannelCredentials } from '@asterism/atls';
import { ClusterKms, dataKeyInfo, MEASUREMENT_SECRET_KEY_ID, parseAuthorizedKeyLine, STATE_DISK_KEY_LENGTH, stateDiskKeyId } from '@asterism/crypto';
import { helmPath } from '@asterism/deploy';
import { binDir } from '@asterism/k8s-testenv';
import { join as joinApi } from '@asterism/proto';
import { eventually, findSecretLeaks, kubectlBinary, type NamedSecret } from '@asterism/testing';
import { SocketTransport, TpmClient } from '@asterism/tpm';
import { ClusterLayout } from '../layout.js';
import { startSwtpm } from '../machine.js';
import { measureBoot } from '../measured-boot.js';
import { stopDetached } from '../detached.js';
import { nodeCgroupDirs } from './cgroups.js';
import { namespaceExists, NETWORK } from './network.js';
import { realNodesUnavailable } from './test-support.js';
import { addRealNode, rebootRealNode } from './faults.js';
import { downReal, JOIN_FORWARD_PORT, upReal } from './real-cluster.js';

const skip = realNodesUnavailable();

const ALL_NODES = ['control-plane-0', 'control-plane-1', 'worker-0', 'worker-1'];

describe('local cluster, kubeadm backend: real nodes end to end', { skip }, () => {
  const root = mkdtempSync(join(tmpdir(), 'asterism-real-'));
  const layout = new ClusterLayout(root);
  const log = (l: string) => process.stderr.write(`[real] ${l}\n`);
  let core: k8s.CoreV1Api;
  let kc: k8s.KubeConfig;
  const kubectl = (...args: string[]) => execFileSync(kubectlBinary(), ['--kubeconfig', layout.hostKubeconfig, ...args], { encoding: 'utf8' });

  before(async () => {
    // One real cluster per machine: wait while another checkout's run holds the network.
    await eventually('the machine\'s local-cluster network is free', async () => (namespaceExists(NETWORK.routerNamespace) ? undefined : true), 900_000);
    const started = Date.now();
    await upReal({ root, controlPlanes: 2, workers: 2, binDir: binDir(), progress: log });
    log(`up --backend kubeadm --control-planes 2 --workers 2 took ${((Date.now() - started) / 1000).toFixed(1)} s`);
    kc = new k8s.KubeConfig();
    kc.loadFromFile(layout.hostKubeconfig);
    core = kc.makeApiClient(k8s.CoreV1Api);
  });

  after(async () => {
    await downReal(root);
    const netns = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout;
    assert.doesNotMatch(netns, /asterism-/, 'no network namespace survives down');
    assert.ok(!readFileSync('/proc/mounts', 'utf8').includes(root), 'no mount of the cluster survives down');
    const procs = execFileSync('ps', ['-eo', 'pid,args']).toString().split('\n').filter((l) => l.includes(root));
    assert.deepEqual(procs, [], 'no process of the cluster survives down');
    for (const n of ALL_NODES) for (const dir of nodeCgroupDirs(n)) assert.equal(existsSync(dir), false, `${dir} removed`);
    assert.equal(existsSync(root), false);
  });

  it('every Node is registered and kept Ready by its real kubelet with containerd', async () => {
    for (const [i, name] of ['control-plane-0', 'control-plane-1', 'worker-0', 'worker-1'].entries()) {
      const node = await core.readNode({ name });
      assert.match(node.status?.nodeInfo?.containerRuntimeVersion ?? '', /^containerd:\/\/1\./);
      assert.equal(node.status?.nodeInfo?.kubeletVersion, 'v1.34.4');
      const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
      assert.equal(ready?.status, 'True', `${name} Ready`);
      assert.equal(ready?.reason, 'KubeletReady');
      assert.equal(node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address, `10.42.0.${10 + i}`);
      const status = JSON.parse(readFileSync(layout.nodeStatus(name), 'utf8')) as { phase: string; bootstrapMs: number };
      log(`${name}: ${status.phase} in ${(status.bootstrapMs / 1000).toFixed(1)} s`);
    }
  });

  it('the second control plane joined etcd and runs its own static control-plane pods', async () => {
    const members = kubectl('-n', 'kube-system', 'exec', 'etcd-control-plane-0', '--', 'etcdctl', '--endpoints=https://127.0.0.1:2379', '--cacert=/etc/kubernetes/pki/etcd/ca.crt', '--cert=/etc/kubernetes/pki/etcd/server.crt', '--key=/etc/kubernetes/pki/etcd/server.key', 'member', 'list');
    assert.deepEqual(members.trim().split('\n').map((l) => l.split(', ')[2]).sort(), ['control-plane-0', 'control-plane-1']);
    // Mirror pods of static pods appear once the kubelet has posted them: on a loaded machine that
    // can be seconds after the node is Ready.
    await eventually('static control-plane pods and services on control-plane-1', async () => {
      const pods = (await core.listNamespacedPod({ namespace: 'kube-system', fieldSelector: 'spec.nodeName=control-plane-1' })).items.map((p) => p.metadata?.name ?? '');
      for (const prefix of ['etcd-', 'kube-apiserver-', 'kube-controller-manager-', 'kube-scheduler-', 'join-service-', 'key-service-']) assert.ok(pods.some((p) => p.startsWith(prefix)), `${prefix} on control-plane-1`);
      return true;
    }, 120_000);
  });

  it('static control-plane pods, kube-proxy and the Helm-deployed services run', async () => {
    const want = ['etcd-control-plane-0', 'kube-apiserver-control-plane-0', 'kube-controller-manager-control-plane-0', 'kube-scheduler-control-plane-0', 'kube-proxy-', 'join-service-', 'key-service-'];
    await eventually('control-plane, kube-proxy and service pods Running and ready', async () => {
      const pods = (await core.listNamespacedPod({ namespace: 'kube-system' })).items;
      for (const prefix of want) {
        const pod = pods.find((p) => p.metadata?.name?.startsWith(prefix));
        assert.equal(pod?.status?.phase, 'Running', `${prefix} Running`);
        assert.ok(pod?.status?.containerStatuses?.every((c) => c.ready), `${prefix} ready`);
      }
      return true;
    }, 120_000);
    const releases = JSON.parse(execFileSync(helmPath(), ['--kubeconfig', layout.hostKubeconfig, 'list', '-n', 'kube-system', '-o', 'json'], { encoding: 'utf8' })) as Array<{ name: string; status: string; chart: string }>;
    assert.deepEqual(releases.map((r) => [r.name, r.status, r.chart]), [['asterism', 'deployed', 'asterism-services-0.1.0']]);
    const joinConfig = await core.readNamespacedConfigMap({ name: 'join-config', namespace: 'kube-system' });
    assert.equal(Buffer.from(joinConfig.binaryData?.measurementSalt ?? '', 'base64').length, 32);
    for (const cm of ['internal-config', 'kubeadm-config']) await core.readNamespacedConfigMap({ name: cm, namespace: 'kube-system' });
  });

  it('the kubeadm path wrote what the reference writes: components ConfigMap + node annotation, NodeVersion, audit log', async () => {
    const node = await core.readNode({ name: 'control-plane-0' });
    const components = node.metadata?.annotations?.['constellation.edgeless.systems/kubernetes-components'];
    assert.match(components ?? '', /^k8s-components-sha256-[0-9a-f]{64}$/);
    const cm = await core.readNamespacedConfigMap({ name: components!, namespace: 'kube-system' });
    assert.equal(cm.immutable, true);
    const versions = (await kc.makeApiClient(k8s.CustomObjectsApi).listClusterCustomObject({ group: 'update.edgeless.systems', version: 'v1alpha1', plural: 'nodeversions' })) as { items: Array<{ spec?: { kubernetesComponentsReference?: string } }> };
    assert.equal(versions.items.length, 1);
    // The API server runs with the audit policy the bootstrapper wrote; its log is on the node's /var/log.
    const audit = join(layout.nodeRoot('control-plane-0'), 'var/log/kubernetes/audit/audit.log');
    await eventually('audit log written', async () => (existsSync(audit) && readFileSync(audit, 'utf8').includes('"level":"Metadata"') ? true : undefined), 30_000);
  });

  it('a Deployment of 2 replicas of a locally built image spreads over the workers; kubectl logs reads them', async () => {
    const labels = { app: 'hello' };
    await kc.makeApiClient(k8s.AppsV1Api).createNamespacedDeployment({
      namespace: 'default',
      body: {
        metadata: { name: 'hello' },
        spec: {
          replicas: 2,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: labels }, topologyKey: 'kubernetes.io/hostname' }] } },
              containers: [{ name: 'hello', image: 'localhost/asterism/busybox:1.35', imagePullPolicy: 'Never', command: ['sh', '-c', 'echo "hello from $(hostname)"; exec sleep 3600'] }],
            },
          },
        },
      },
    });
    const pods = await eventually('both replicas Running', async () => {
      const items = (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=hello' })).items;
      return items.length === 2 && items.every((p) => p.status?.phase === 'Running') ? items : undefined;
    }, 90_000);
    assert.deepEqual(pods.map((p) => p.spec?.nodeName).sort(), ['worker-0', 'worker-1']);
    for (const p of pods) assert.equal(kubectl('logs', p.metadata!.name!).trim(), `hello from ${p.metadata!.name!}`);
  });

  it('the joinservice pod answers an attested IssueJoinTicket; the disk key comes from the keyservice pod', async () => {
    const tpm = await startSwtpm(layout, 'test-client');
    try {
      await measureBoot(layout.tpmSocket('test-client'));
      const tpmClient = new TpmClient(await SocketTransport.connect({ path: layout.tpmSocket('test-client') }));
      const issuer = new QemuVtpmIssuer(async () => tpmClient);
      const client = new joinApi.APIClient(`127.0.0.1:${JOIN_FORWARD_PORT}`, atlsChannelCredentials({ issuer }));
      const diskUuid = '6a0c9c4f-23f5-4e34-a1f0-3b7c8d0e1f21';
      const res = await new Promise<joinApi.IssueJoinTicketResponse>((resolve, reject) =>
        client.issueJoinTicket(ticketRequest(root, diskUuid), new grpc.Metadata(), { deadline: Date.now() + 60_000 }, (err, r) => (err ? reject(err) : resolve(r!))),
      );
      client.close();
      assert.deepEqual(Buffer.from(res.stateDiskKey), Buffer.from(kms().getDek(stateDiskKeyId(diskUuid), STATE_DISK_KEY_LENGTH)));
      assert.equal(res.apiServerEndpoint, '10.42.0.10:6443');
      assert.match(res.token, /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
      assert.match(res.discoveryTokenCaCertHash, /^sha256:[0-9a-f]{64}$/);
      assert.match(Buffer.from(res.kubeletCert).toString(), /BEGIN CERTIFICATE/);
      assert.equal(res.measurementSalt.length, 32);
      assert.equal(res.measurementSecret.length, 32);
      assert.ok(res.hostCertificate.length > 0 && res.authorizedCaPublicKey.length > 0);
      await tpmClient.transport.close();
      // The keyservice logs successful calls at debug only: its metrics show it served the key.
      // A pod that is still starting (e.g. the second control plane's) refuses the scrape: poll.
      await eventually('a keyservice pod reporting a served GetDataKey', async () => {
        const keyPods = (await core.listNamespacedPod({ namespace: 'kube-system', labelSelector: 'k8s-app=key-service' })).items;
        const scrape = (name: string) => {
          try {
            return kubectl('get', '--raw', `/api/v1/namespaces/kube-system/pods/${name}:9101/proxy/metrics`);
          } catch {
            return '';
          }
        };
        const served = keyPods.map((p) => scrape(p.metadata!.name!));
        return served.some((m) => /keyservice_grpc_server_handled_total\{method="\/kms\.API\/GetDataKey",code="Ok"\} [1-9]/.test(m)) ? true : undefined;
      }, 30_000);
    } finally {
      await stopDetached(tpm.pid, 2000);
    }
  });

  it('a rebooted worker rejoins: same disk key opens its LUKS header, PCR 15 re-marked, its kubelet is back', async () => {
    const before = JSON.parse(readFileSync(layout.nodeStatus('worker-1'), 'utf8')) as { pcr15: string };
    const proxyRestarts = async () => (await core.listNamespacedPod({ namespace: 'kube-system', fieldSelector: 'spec.nodeName=worker-1', labelSelector: 'k8s-app=kube-proxy' })).items[0]?.status?.containerStatuses?.[0]?.restartCount ?? -1;
    const restartsBefore = await proxyRestarts();
    await rebootRealNode(root, 'worker-1');
    const after = await eventually('worker-1 rejoined', async () => {
      const s = existsSync(layout.nodeStatus('worker-1')) ? (JSON.parse(readFileSync(layout.nodeStatus('worker-1'), 'utf8')) as { phase: string; pcr15: string; bootstrapMs: number }) : undefined;
      return s?.phase === 'rejoined' ? s : undefined;
    }, 90_000);
    log(`worker-1 rejoined in ${(after.bootstrapMs / 1000).toFixed(1)} s`);
    assert.equal(after.pcr15, before.pcr15);
    const uuid = execFileSync('cryptsetup', ['luksUUID', layout.diskImage('worker-1')], { encoding: 'utf8' }).trim().toLowerCase();
    const keyFile = join(root, 'worker-1.disk-key');
    writeFileSync(keyFile, kms().getDek(stateDiskKeyId(uuid), STATE_DISK_KEY_LENGTH), { mode: 0o600 });
    execFileSync('cryptsetup', ['open', '--test-passphrase', `--key-file=${keyFile}`, layout.diskImage('worker-1')]);
    rmSync(keyFile);
    // The node's containers were killed with it: the kubelet that came back restarted them.
    await eventually('kube-proxy on worker-1 restarted by the new kubelet', async () => ((await proxyRestarts()) > restartsBefore ? true : undefined), 90_000);
    await eventually('worker-1 Ready', async () => ((await core.readNode({ name: 'worker-1' })).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined), 60_000);
  });

  it('a worker with a tampered measured boot is refused; the joinservice pod logs and counts the PCR', async () => {
    await addRealNode(root, 'worker-bad', { tamper: true });
    const refusal = await eventually('refusal in a joinservice pod log', async () => kubectl('-n', 'kube-system', 'logs', '-l', 'k8s-app=join-service', '--tail=-1').split('\n').find((l) => l.includes('rejected aTLS peer') && l.includes('MEASUREMENT_MISMATCH') && l.includes('PCR[9]')), 60_000);
    assert.match(refusal, /"code":"ATTESTATION_INVALID"/);
    const counted = await Promise.all(
      (await core.listNamespacedPod({ namespace: 'kube-system', labelSelector: 'k8s-app=join-service' })).items.map((p) => kubectl('get', '--raw', `/api/v1/namespaces/kube-system/pods/${p.metadata!.name!}:9092/proxy/metrics`)),
    );
    assert.ok(counted.some((m) => /joinservice_tickets_refused_total\{kind="attestation",reason="MEASUREMENT_MISMATCH",variant="qemu-vtpm"\} [1-9]/.test(m)));
    assert.notEqual((JSON.parse(readFileSync(layout.nodeStatus('worker-bad'), 'utf8')) as { phase: string }).phase, 'joined');
    assert.equal((await core.listNode()).items.some((n) => n.metadata?.name === 'worker-bad'), false);
  });

  it('a worker joins while the keyservice pods are deleted (it waits for their replacements)', async () => {
    await core.deleteCollectionNamespacedPod({ namespace: 'kube-system', labelSelector: 'k8s-app=key-service', gracePeriodSeconds: 0 });
    await addRealNode(root, 'worker-late');
    await waitJoinedAndReady('worker-late');
  });

  it('a worker joins while the joinservice pod of control-plane-0 is deleted (the other control plane serves it)', async () => {
    await core.deleteCollectionNamespacedPod({ namespace: 'kube-system', labelSelector: 'k8s-app=join-service', fieldSelector: 'spec.nodeName=control-plane-0', gracePeriodSeconds: 0 });
    await addRealNode(root, 'worker-late2');
    await waitJoinedAndReady('worker-late2');
  });

  it('no secret reaches a log, a status file or a pod log', async () => {
    const master = masterSecret();
    const secrets: NamedSecret[] = [
      { name: 'master secret', value: master.key },
      { name: 'master salt', value: master.salt },
      { name: 'measurement secret', value: kms().getDek(dataKeyInfo(MEASUREMENT_SECRET_KEY_ID), 32) },
      { name: 'init secret', value: readFileSync(layout.initSecretFile, 'utf8').trim() },
    ];
    for (const n of [...ALL_NODES, 'worker-late', 'worker-late2']) {
      const uuid = execFileSync('cryptsetup', ['luksUUID', layout.diskImage(n)], { encoding: 'utf8' }).trim().toLowerCase();
      secrets.push({ name: `${n} state disk key`, value: kms().getDek(stateDiskKeyId(uuid), STATE_DISK_KEY_LENGTH) });
      const pem = readFileSync(join(layout.nodeRoot(n), 'run/state/kubelet/pki/kubelet-client-key.pem'), 'utf8');
      secrets.push({ name: `${n} kubelet key`, value: Buffer.from(createPrivateKey(pem).export({ format: 'jwk' }).d!, 'base64url') });
    }
    const tokens = (await core.listNamespacedSecret({ namespace: 'kube-system', fieldSelector: 'type=bootstrap.kubernetes.io/token' })).items;
    assert.ok(tokens.length > 0, 'the joins left bootstrap tokens to look for');
    for (const t of tokens) secrets.push({ name: 'bootstrap token secret', value: Buffer.from(t.data!['token-secret']!, 'base64').toString() });
    const files = [
      ...readdirSync(root).filter((f) => f.endsWith('.log')).map((f) => join(root, f)),
      ...[...ALL_NODES, 'worker-late', 'worker-late2', 'worker-bad'].flatMap((n) => [
        ...readdirSync(layout.nodeDir(n)).filter((f) => f.endsWith('.log')).map((f) => join(layout.nodeDir(n), f)),
        ...(readdirSync(join(layout.nodeRoot(n), 'var/log'), { recursive: true }) as string[]).filter((f) => f.endsWith('.log')).map((f) => join(layout.nodeRoot(n), 'var/log', f)),
        layout.nodeStatus(n),
      ]),
    ].filter((f) => existsSync(f));
    assert.ok(files.some((f) => f.includes('/var/log/pods/kube-system_join-service')), 'pod logs are scanned');
    const leaks = files.flatMap((f) => findSecretLeaks(readFileSync(f, 'latin1'), secrets).map((l) => `${l} in ${f.slice(root.length + 1)}`));
    assert.deepEqual(leaks, []);
    const clusterId = Buffer.from((JSON.parse(readFileSync(join(layout.workspace, 'asterism-id.json'), 'utf8')) as { clusterID: string }).clusterID, 'base64');
    assert.ok(files.some((f) => findSecretLeaks(readFileSync(f, 'latin1'), [{ name: 'cluster ID', value: clusterId }]).length > 0), 'the scan sees the logs: the public cluster ID is found');
  });

  function masterSecret(): { key: Buffer; salt: Buffer } {
    const m = JSON.parse(readFileSync(join(layout.workspace, 'asterism-mastersecret.json'), 'utf8')) as { key: string; salt: string };
    return { key: Buffer.from(m.key, 'base64'), salt: Buffer.from(m.salt, 'base64') };
  }
  function kms(): ClusterKms {
    return new ClusterKms(masterSecret());
  }
  async function waitJoinedAndReady(name: string): Promise<void> {
    const started = Date.now();
    await eventually(`${name} joined`, async () => (existsSync(layout.nodeStatus(name)) && (JSON.parse(readFileSync(layout.nodeStatus(name), 'utf8')) as { phase: string }).phase === 'joined' ? true : undefined), 120_000);
    await eventually(`${name} Ready`, async () => ((await core.readNode({ name })).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined), 90_000);
    log(`${name}: joined and Ready ${((Date.now() - started) / 1000).toFixed(1)} s after its supervisor started`);
  }
});

/** A worker's ticket request with a fresh kubelet CSR and SSH host key. */
function ticketRequest(root: string, diskUuid: string): joinApi.IssueJoinTicketRequest {
  const dir = mkdtempSync(join(root, 'client-'));
  const key = join(dir, 'kubelet.key');
  execFileSync('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key]);
  execFileSync('openssl', ['req', '-new', '-key', key, '-subj', '/O=system:nodes/CN=system:node:worker-test', '-addext', 'subjectAltName=IP:10.42.0.99', '-outform', 'DER', '-out', `${key}.csr`]);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', '', '-f', `${key}.ssh`]);
  return {
    diskUuid,
    certificateRequest: readFileSync(`${key}.csr`),
    isControlPlane: false,
    hostPublicKey: parseAuthorizedKeyLine(readFileSync(`${key}.ssh.pub`, 'utf8')),
    hostCertificatePrincipals: ['10.42.0.99', 'worker-test'],
  };
}
