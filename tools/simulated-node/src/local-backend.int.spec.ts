/**
 * The local Kubernetes backend against the REAL control-plane binaries of tools/k8s-testenv:
 * init brings up etcd + kube-apiserver + controller-manager and the cluster objects; a joining
 * node verifies discovery with its bootstrap token and registers with its kubelet certificate.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { BootstrapTokenIssuer, formatBootstrapToken, NODE_VERSION_NAME, UPDATE_GROUP, UPDATE_VERSION } from '@asterism/k8s';
import { createLeaf } from '@asterism/k8s-controlplane';
import { controlPlaneBinaries, testenvUnavailable } from '@asterism/k8s-testenv';
import { createLogger } from '@asterism/logger';
import type { InstanceMetadata } from '@asterism/metadata';
import type { ClusterServices, ClusterServicesContext } from './local-backend.js';
import { LocalClusterInitializer, LocalClusterJoiner } from './local-backend.js';
import { caPins, DiscoveryError } from './discovery.js';

const skip = testenvUnavailable();
const logger = createLogger({ component: 'test', level: 'error' });

const self: InstanceMetadata = { Name: 'control-plane-0', ProviderID: 'local:///control-plane-0', Role: 'ControlPlane', VPCIP: '127.0.0.1', SecondaryIPRange: '', AliasIPRanges: null };

class RecordingServices implements ClusterServices {
  started: ClusterServicesContext | undefined;
  stopped = false;
  async start(ctx: ClusterServicesContext) {
    this.started = ctx;
  }
  async stop() {
    this.stopped = true;
  }
}

describe('local Kubernetes backend', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'local-backend-'));
  const services = new RecordingServices();
  let init: LocalClusterInitializer;
  let admin: k8s.KubeConfig;
  let ca: { certPem: string; keyPem: string };
  const components = [{ url: 'https://example.invalid/kubelet', hash: 'sha256:00', installPath: '/run/state/bin/kubelet', extract: false }];

  before(async () => {
    init = new LocalClusterInitializer({ binaries: controlPlaneBinaries(), dir, services, logger, apiServerPort: 0 });
    const kubeconfig = await init.initCluster({
      kubernetesVersion: 'v1.34.4',
      clusterName: 'asterism',
      conformanceMode: false,
      components,
      apiServerCertSans: ['192.0.2.7', 'cluster.example'],
      serviceCidr: '',
      serviceSecrets: { masterSecret: Buffer.alloc(32, 1), masterSalt: Buffer.alloc(32, 2), measurementSalt: Buffer.alloc(32, 3) },
      node: { name: self.Name, role: self.Role, ip: self.VPCIP, providerId: self.ProviderID },
    });
    admin = new k8s.KubeConfig();
    admin.loadFromString(kubeconfig.toString());
    ca = { certPem: readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8'), keyPem: readFileSync(join(dir, 'pki', 'ca.key'), 'utf8') };
  });
  after(async () => {
    await init?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('returns a system:masters kubeconfig named after the cluster and sets up the cluster objects', async () => {
    const user = admin.getCurrentUser();
    assert.equal(user?.name, 'asterism-admin');
    const core = admin.makeApiClient(k8s.CoreV1Api);
    const nodes = await core.listNode();
    assert.deepEqual(nodes.items.map((n) => n.metadata?.name), ['control-plane-0']);
    assert.equal(nodes.items[0]!.metadata?.labels?.['node-role.kubernetes.io/control-plane'], '');
    assert.equal(nodes.items[0]!.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    const nv = (await admin.makeApiClient(k8s.CustomObjectsApi).getClusterCustomObject({ group: UPDATE_GROUP, version: UPDATE_VERSION, plural: 'nodeversions', name: NODE_VERSION_NAME })) as { spec: { kubernetesComponentsReference: string } };
    const cm = await core.readNamespacedConfigMap({ namespace: 'kube-system', name: nv.spec.kubernetesComponentsReference });
    assert.equal(JSON.parse(cm.data!.components!)[0].install_path, '/run/state/bin/kubelet');
    await core.readNamespacedConfigMap({ namespace: 'kube-system', name: 'internal-config' });
    const startedByInit = services.started;
    assert.equal(startedByInit, undefined, "services start only in startServices (after the init node's disk is bound)");
    await init.startServices();
    assert.ok(services.started, 'services were started');
    assert.equal(services.started.secrets.masterSecret.length, 32);
  });

  it('a node with a valid ticket passes discovery, authenticates with the token and registers with its kubelet certificate', async () => {
    const token = await new BootstrapTokenIssuer(admin.makeApiClient(k8s.CoreV1Api)).create({ ttlMs: 15 * 60_000 });
    const kubelet = await createLeafFromPem(ca, 'worker-1');
    const server = new URL(admin.getCurrentCluster()!.server);
    await new LocalClusterJoiner(logger).joinCluster({
      apiServerEndpoint: server.host,
      token: formatBootstrapToken(token),
      caCertHashes: caPins(ca.certPem),
      role: 'Worker',
      nodeName: 'worker-1',
      nodeIp: '127.0.0.2',
      providerId: 'local:///worker-1',
      components,
      kubeletCertPem: Buffer.from(kubelet.certPem),
      kubeletKeyPem: kubelet.keyPem,
    });
    const node = await admin.makeApiClient(k8s.CoreV1Api).readNode({ name: 'worker-1' });
    assert.equal(node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address, '127.0.0.2');
    // NodeRestriction: the node's own credentials cannot touch another node.
    const asWorker1 = new k8s.KubeConfig();
    asWorker1.loadFromOptions({ clusters: admin.clusters, users: [{ name: 'w1', certData: Buffer.from(kubelet.certPem).toString('base64'), keyData: Buffer.from(kubelet.keyPem).toString('base64') }], contexts: [{ name: 'c', cluster: admin.clusters[0]!.name, user: 'w1' }], currentContext: 'c' });
    await assert.rejects(asWorker1.makeApiClient(k8s.CoreV1Api).deleteNode({ name: 'control-plane-0' }), (e: { code?: number }) => e.code === 403);
  });

  it('refuses an API server whose CA does not match the pinned hash, and a token whose secret is wrong', async () => {
    const token = await new BootstrapTokenIssuer(admin.makeApiClient(k8s.CoreV1Api)).create({ ttlMs: 15 * 60_000 });
    const kubelet = await createLeafFromPem(ca, 'worker-3');
    const server = new URL(admin.getCurrentCluster()!.server);
    const base = { apiServerEndpoint: server.host, role: 'Worker' as const, nodeName: 'worker-3', nodeIp: '127.0.0.3', providerId: '', components, kubeletCertPem: Buffer.from(kubelet.certPem), kubeletKeyPem: kubelet.keyPem };
    await assert.rejects(
      new LocalClusterJoiner(logger).joinCluster({ ...base, token: formatBootstrapToken(token), caCertHashes: [`sha256:${'00'.repeat(32)}`] }),
      (e: unknown) => e instanceof DiscoveryError && e.code === 'DISCOVERY_CA_MISMATCH',
    );
    const wrong = `${token.id}.${'x'.repeat(16)}`;
    await assert.rejects(
      new LocalClusterJoiner(logger).joinCluster({ ...base, token: wrong, caCertHashes: caPins(ca.certPem) }),
      (e: unknown) => e instanceof DiscoveryError && e.code === 'DISCOVERY_SIGNATURE_INVALID',
    );
    await assert.rejects(admin.makeApiClient(k8s.CoreV1Api).readNode({ name: 'worker-3' }), (e: { code?: number }) => e.code === 404);
  });
});

/** A kubelet certificate from the CA files on disk (what the joinservice's KubeletCa does). */
async function createLeafFromPem(ca: { certPem: string; keyPem: string }, name: string) {
  const { webcrypto } = await import('node:crypto');
  const x509 = await import('@peculiar/x509');
  const cert = new x509.X509Certificate(ca.certPem);
  const der = x509.PemConverter.decodeFirst(ca.keyPem);
  const privateKey = await webcrypto.subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
  const publicKey = await cert.publicKey.export(webcrypto as never);
  return createLeaf({ certPem: ca.certPem, keyPem: ca.keyPem, cert, keys: { privateKey, publicKey } as never }, { commonName: `system:node:${name}`, organizations: ['system:nodes'], usage: 'both' });
}
