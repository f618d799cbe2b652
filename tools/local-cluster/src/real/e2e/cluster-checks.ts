/**
 * The real cluster as `up` leaves it (real-cluster.int.spec.ts): kubelets with containerd, etcd
 * and static pods on both control planes, the Helm release, the reference's objects, a workload on
 * the workers, and an attested IssueJoinTicket answered by the joinservice pod.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as k8s from '@kubernetes/client-node';
import { QemuVtpmIssuer } from '@asterism/attestation';
import { atlsChannelCredentials } from '@asterism/atls';
import { parseAuthorizedKeyLine, STATE_DISK_KEY_LENGTH, stateDiskKeyId } from '@asterism/crypto';
import { helmPath } from '@asterism/deploy';
import { join as joinApi } from '@asterism/proto';
import { eventually } from '@asterism/testing';
import { SocketTransport, TpmClient } from '@asterism/tpm';
import { stopDetached } from '../../detached.js';
import { startSwtpm } from '../../machine.js';
import { measureBoot } from '../../measured-boot.js';
import { bootEventsOf } from '../image-measurements.js';
import { clusterMemory, formatMemory, type NodeMemory } from '../memory.js';
import { JOIN_FORWARD_PORT } from '../real-cluster.js';
import type { RealClusterContext } from './context.js';

/** Every Node registered and kept Ready by its kubelet, runtime containerd, on its own address. */
export async function nodesReadyByKubelets(ctx: RealClusterContext, nodes: string[]): Promise<void> {
  for (const [i, name] of nodes.entries()) {
    const node = await ctx.core.readNode({ name });
    assert.match(node.status?.nodeInfo?.containerRuntimeVersion ?? '', /^containerd:\/\/1\./);
    assert.equal(node.status?.nodeInfo?.kubeletVersion, 'v1.34.4');
    const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'True', `${name} Ready`);
    assert.equal(ready?.reason, 'KubeletReady');
    assert.equal(node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address, `10.42.0.${10 + i}`);
    const status = ctx.status(name)!;
    ctx.log(`${name}: ${status.phase} in ${((status.bootstrapMs ?? 0) / 1000).toFixed(1)} s`);
  }
}

/** etcd has exactly both control planes as members; control-plane-1 runs its own static and service pods. */
export async function secondControlPlaneJoined(ctx: RealClusterContext): Promise<void> {
  const members = ctx.kubectl('-n', 'kube-system', 'exec', 'etcd-control-plane-0', '--', 'etcdctl', '--endpoints=https://127.0.0.1:2379', '--cacert=/etc/kubernetes/pki/etcd/ca.crt', '--cert=/etc/kubernetes/pki/etcd/server.crt', '--key=/etc/kubernetes/pki/etcd/server.key', 'member', 'list');
  assert.deepEqual(members.trim().split('\n').map((l) => l.split(', ')[2]).sort(), ['control-plane-0', 'control-plane-1']);
  // Mirror pods of static pods appear once the kubelet has posted them: on a loaded machine that
  // can be seconds after the node is Ready.
  await eventually('static control-plane pods and services on control-plane-1', async () => {
    const pods = (await ctx.core.listNamespacedPod({ namespace: 'kube-system', fieldSelector: 'spec.nodeName=control-plane-1' })).items.map((p) => p.metadata?.name ?? '');
    for (const prefix of ['etcd-', 'kube-apiserver-', 'kube-controller-manager-', 'kube-scheduler-', 'join-service-', 'key-service-']) assert.ok(pods.some((p) => p.startsWith(prefix)), `${prefix} on control-plane-1`);
    return true;
  }, 120_000);
}

/** Static pods, kube-proxy and the Helm-deployed services Running and ready; the release and the ConfigMaps. */
export async function servicesRun(ctx: RealClusterContext): Promise<void> {
  const want = ['etcd-control-plane-0', 'kube-apiserver-control-plane-0', 'kube-controller-manager-control-plane-0', 'kube-scheduler-control-plane-0', 'kube-proxy-', 'join-service-', 'key-service-'];
  await eventually('control-plane, kube-proxy and service pods Running and ready', async () => {
    const pods = (await ctx.core.listNamespacedPod({ namespace: 'kube-system' })).items;
    for (const prefix of want) {
      const pod = pods.find((p) => p.metadata?.name?.startsWith(prefix));
      assert.equal(pod?.status?.phase, 'Running', `${prefix} Running`);
      assert.ok(pod?.status?.containerStatuses?.every((c) => c.ready), `${prefix} ready`);
    }
    return true;
  }, 120_000);
  const releases = JSON.parse(execFileSync(helmPath(), ['--kubeconfig', ctx.layout.hostKubeconfig, 'list', '-n', 'kube-system', '-o', 'json'], { encoding: 'utf8' })) as Array<{ name: string; status: string; chart: string }>;
  assert.deepEqual(releases.map((r) => [r.name, r.status, r.chart]), [['asterism', 'deployed', 'asterism-services-0.1.0']]);
  const joinConfig = await ctx.core.readNamespacedConfigMap({ name: 'join-config', namespace: 'kube-system' });
  assert.equal(Buffer.from(joinConfig.binaryData?.measurementSalt ?? '', 'base64').length, 32);
  for (const cm of ['internal-config', 'kubeadm-config']) await ctx.core.readNamespacedConfigMap({ name: cm, namespace: 'kube-system' });
}

/** Components ConfigMap + node annotation, one NodeVersion, the API server's audit log. */
export async function referenceObjects(ctx: RealClusterContext): Promise<void> {
  const node = await ctx.core.readNode({ name: 'control-plane-0' });
  const components = node.metadata?.annotations?.['constellation.edgeless.systems/kubernetes-components'];
  assert.match(components ?? '', /^k8s-components-sha256-[0-9a-f]{64}$/);
  const cm = await ctx.core.readNamespacedConfigMap({ name: components!, namespace: 'kube-system' });
  assert.equal(cm.immutable, true);
  const versions = (await ctx.kc.makeApiClient(k8s.CustomObjectsApi).listClusterCustomObject({ group: 'update.edgeless.systems', version: 'v1alpha1', plural: 'nodeversions' })) as { items: unknown[] };
  assert.equal(versions.items.length, 1);
  // The API server runs with the audit policy the bootstrapper wrote; its log is on the node's /var/log.
  const audit = join(ctx.layout.nodeRoot('control-plane-0'), 'var/log/kubernetes/audit/audit.log');
  await eventually('audit log written', async () => (existsSync(audit) && readFileSync(audit, 'utf8').includes('"level":"Metadata"') ? true : undefined), 30_000);
}

/** A 2-replica Deployment of the local busybox image, one pod per worker (anti-affinity), logs read. */
export async function workloadOnWorkers(ctx: RealClusterContext): Promise<void> {
  const labels = { app: 'hello' };
  await ctx.kc.makeApiClient(k8s.AppsV1Api).createNamespacedDeployment({
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
    const items = (await ctx.core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=hello' })).items;
    return items.length === 2 && items.every((p) => p.status?.phase === 'Running') ? items : undefined;
  }, 90_000);
  assert.deepEqual(pods.map((p) => p.spec?.nodeName).sort(), ['worker-0', 'worker-1']);
  for (const p of pods) assert.equal(ctx.kubectl('logs', p.metadata!.name!).trim(), `hello from ${p.metadata!.name!}`);
}

/** An attested IssueJoinTicket (swtpm issuer) through the host forward; the key comes from a keyservice pod. */
export async function attestedTicketFromPods(ctx: RealClusterContext): Promise<void> {
  const tpm = await startSwtpm(ctx.layout, 'test-client');
  try {
    await measureBoot(ctx.layout.tpmSocket('test-client'), await bootEventsOf(ctx.layout));
    const tpmClient = new TpmClient(await SocketTransport.connect({ path: ctx.layout.tpmSocket('test-client') }));
    const client = new joinApi.APIClient(`127.0.0.1:${JOIN_FORWARD_PORT}`, atlsChannelCredentials({ issuer: new QemuVtpmIssuer(async () => tpmClient) }));
    const diskUuid = '6a0c9c4f-23f5-4e34-a1f0-3b7c8d0e1f21';
    const res = await new Promise<joinApi.IssueJoinTicketResponse>((resolve, reject) =>
      client.issueJoinTicket(ticketRequest(ctx.root, diskUuid), new grpc.Metadata(), { deadline: Date.now() + 60_000 }, (err, r) => (err ? reject(err) : resolve(r!))),
    );
    client.close();
    assert.deepEqual(Buffer.from(res.stateDiskKey), Buffer.from(ctx.kms().getDek(stateDiskKeyId(diskUuid), STATE_DISK_KEY_LENGTH)));
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
      const served = (await ctx.pods('k8s-app=key-service')).map((p) => ctx.podMetrics(p.name, 9101));
      return served.some((m) => /keyservice_grpc_server_handled_total\{method="\/kms\.API\/GetDataKey",code="Ok"\} [1-9]/.test(m)) ? true : undefined;
    }, 30_000);
  } finally {
    await stopDetached(tpm.pid, 2000);
  }
}

/**
 * RSS of every process of every node (their cgroups), named after their containers, once every
 * node runs what it should: containerd, a kubelet and kube-proxy; on control planes also the
 * control-plane pods and the services (a control plane that joined last may still be starting them).
 */
export async function memoryPerProcess(ctx: RealClusterContext, controlPlanes: string[], workers: string[]): Promise<void> {
  const missing = (report: NodeMemory[]) =>
    report.flatMap((n) => {
      const names = new Set(n.groups.filter((g) => g.rssKiB > 0).map((g) => g.name));
      const want = ['containerd', 'kubelet', 'kube-proxy', ...(controlPlanes.includes(n.node) ? ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'join-service', 'key-service'] : [])];
      return want.filter((w) => !names.has(w)).map((w) => `${w} on ${n.node}`);
    });
  let last: NodeMemory[] = [];
  try {
    await eventually('every node running its processes', async () => {
      last = await clusterMemory(ctx.layout.hostKubeconfig, [...controlPlanes, ...workers]);
      return missing(last).length === 0 ? true : undefined;
    }, 90_000);
  } finally {
    for (const line of formatMemory(last)) ctx.log(`memory (RSS) ${line}`);
  }
  assert.deepEqual(missing(last), []);
}

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
