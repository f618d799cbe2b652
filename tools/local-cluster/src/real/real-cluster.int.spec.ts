/**
 * The kubeadm backend end to end (docs/adr/0019-node-runtime.md): node 0 as a real node
 * (containerd + kubelet in its own namespaces and cgroup), `asterism init` through the
 * InitServer and the kubeadm backend, the services as Helm pods; a workload pod; an attested
 * IssueJoinTicket answered by the joinservice pod with a key from the keyservice pod; a clean
 * `down`. Needs root, the node-runtime packages and tools/k8s-testenv's binaries.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import * as k8s from '@kubernetes/client-node';
import { QemuVtpmIssuer } from '@asterism/attestation';
import { atlsChannelCredentials } from '@asterism/atls';
import { ClusterKms, parseAuthorizedKeyLine, STATE_DISK_KEY_LENGTH, stateDiskKeyId } from '@asterism/crypto';
import { helmPath } from '@asterism/deploy';
import { binDir, testenvUnavailable } from '@asterism/k8s-testenv';
import { join as joinApi } from '@asterism/proto';
import { eventually, kubectlBinary, missingComponent } from '@asterism/testing';
import { SocketTransport, TpmClient } from '@asterism/tpm';
import { ClusterLayout } from '../layout.js';
import { startSwtpm } from '../machine.js';
import { measureBoot } from '../measured-boot.js';
import { stopDetached } from '../detached.js';
import { nodeCgroupDirs } from './cgroups.js';
import { checkHostTools, downReal, JOIN_FORWARD_PORT, upReal } from './real-cluster.js';

function hostToolsMissing(): string | false {
  try {
    checkHostTools();
    return process.getuid?.() === 0 ? false : missingComponent('root', 'run as root (namespaces, cgroups, mounts)');
  } catch (err) {
    return missingComponent((err as Error).message, 'bash tools/scripts/setup.sh');
  }
}

const skip = testenvUnavailable() || hostToolsMissing();

describe('local cluster, kubeadm backend: node 0 as a real node', { skip }, () => {
  const root = mkdtempSync(join(tmpdir(), 'asterism-real-'));
  const layout = new ClusterLayout(root);
  const log = (l: string) => process.stderr.write(`[real] ${l}\n`);
  let core: k8s.CoreV1Api;
  let kc: k8s.KubeConfig;
  const kubectl = (...args: string[]) => execFileSync(kubectlBinary(), ['--kubeconfig', layout.hostKubeconfig, ...args], { encoding: 'utf8' });

  before(async () => {
    const started = Date.now();
    await upReal({ root, controlPlanes: 1, workers: 0, binDir: binDir(), progress: log });
    log(`up --backend kubeadm took ${((Date.now() - started) / 1000).toFixed(1)} s`);
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
    for (const dir of nodeCgroupDirs('control-plane-0')) assert.equal(existsSync(dir), false, `${dir} removed`);
    assert.equal(existsSync(root), false);
  });

  it('the Node is registered and kept Ready by the real kubelet with containerd', async () => {
    const node = await core.readNode({ name: 'control-plane-0' });
    assert.match(node.status?.nodeInfo?.containerRuntimeVersion ?? '', /^containerd:\/\/1\./);
    assert.equal(node.status?.nodeInfo?.kubeletVersion, 'v1.34.4');
    const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'True');
    assert.equal(ready?.reason, 'KubeletReady');
    assert.deepEqual(node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address, '10.42.0.10');
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
    assert.match(components ?? '', /^k8s-components-[0-9a-f]+$/);
    const cm = await core.readNamespacedConfigMap({ name: components!, namespace: 'kube-system' });
    assert.equal(cm.immutable, true);
    const versions = (await kc.makeApiClient(k8s.CustomObjectsApi).listClusterCustomObject({ group: 'update.edgeless.systems', version: 'v1alpha1', plural: 'nodeversions' })) as { items: Array<{ spec?: { kubernetesComponentsReference?: string } }> };
    assert.equal(versions.items.length, 1);
    // The API server runs with the audit policy the bootstrapper wrote; its log is on the node's /var/log.
    const audit = join(layout.nodeRoot('control-plane-0'), 'var/log/kubernetes/audit/audit.log');
    await eventually('audit log written', async () => (existsSync(audit) && readFileSync(audit, 'utf8').includes('"level":"Metadata"') ? true : undefined), 30_000);
  });

  it('a workload pod built from a local image runs and kubectl logs returns its output', async () => {
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'hello' },
        spec: {
          restartPolicy: 'Never',
          tolerations: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' }],
          containers: [{ name: 'hello', image: 'localhost/asterism/busybox:1.35', imagePullPolicy: 'Never', command: ['sh', '-c', 'echo "hello from $(hostname)"'] }],
        },
      },
    });
    await eventually('pod hello Succeeded', async () => ((await core.readNamespacedPod({ name: 'hello', namespace: 'default' })).status?.phase === 'Succeeded' ? true : undefined), 90_000);
    assert.equal(kubectl('logs', 'hello').trim(), 'hello from hello');
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
      const master = JSON.parse(readFileSync(join(layout.workspace, 'asterism-mastersecret.json'), 'utf8')) as { key: string; salt: string };
      const kms = new ClusterKms({ key: Buffer.from(master.key, 'base64'), salt: Buffer.from(master.salt, 'base64') });
      assert.deepEqual(Buffer.from(res.stateDiskKey), Buffer.from(kms.getDek(stateDiskKeyId(diskUuid), STATE_DISK_KEY_LENGTH)));
      assert.equal(res.apiServerEndpoint, '10.42.0.10:6443');
      assert.match(res.token, /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
      assert.match(res.discoveryTokenCaCertHash, /^sha256:[0-9a-f]{64}$/);
      assert.match(Buffer.from(res.kubeletCert).toString(), /BEGIN CERTIFICATE/);
      assert.equal(res.measurementSalt.length, 32);
      assert.equal(res.measurementSecret.length, 32);
      assert.ok(res.hostCertificate.length > 0 && res.authorizedCaPublicKey.length > 0);
      await tpmClient.transport.close();
      const joinPodIp = (await core.listNamespacedPod({ namespace: 'kube-system', labelSelector: 'k8s-app=join-service' })).items[0]?.status?.podIP;
      const served = kubectl('-n', 'kube-system', 'logs', '-l', 'k8s-app=key-service', '--tail=500')
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { method?: string; peer?: string; status?: string })
        .filter((l) => l.method?.endsWith('/GetDataKey') && l.status === 'Ok');
      assert.ok(served.some((l) => l.peer?.startsWith(`${joinPodIp}:`)), `the keyservice pod served GetDataKey to the joinservice pod (${joinPodIp})`);
    } finally {
      await stopDetached(tpm.pid, 2000);
    }
  });
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
