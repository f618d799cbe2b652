/**
 * The umbrella chart installed with the real helm into the REAL kube-apiserver of
 * tools/k8s-testenv (no scheduler/kubelet: pods never start, only object acceptance is checked),
 * every object re-validated with a strict server-side dry run, then the joinservice's and the
 * keyservice's exact Kubernetes calls made with their ServiceAccount tokens (TokenRequest): RBAC
 * allows what they do and forbids what they do not need (the attestation monitor's too, with the
 * libs/node-attestation classes it runs); the verification service has no API access and keeps the
 * reference's NodePorts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import {
  BootstrapTokenIssuer,
  clientsFromConfig,
  ConfigMapStore,
  decodeComponents,
  encodeComponents,
  JOIN_TOKEN_TTL_MS,
  JoiningNodeWriter,
  K8sError,
  NodeVersionReader,
  UPDATE_GROUP,
  UPDATE_VERSION,
  type KubeClients,
} from '@asterism/k8s';
import { adminGet } from '@asterism/k8s-controlplane';
import { startTestControlPlane, testenvUnavailable, type TestControlPlane } from '@asterism/k8s-testenv';
import { BoundDisks, DenyListStore, NodeStatusWriter, QUARANTINE_TAINT } from '@asterism/node-attestation';
import { missingComponent } from '@asterism/testing';
import { umbrellaValues } from './chart-values.fixture.js';
import { helm, helmMissing, helmOk, preparedCharts, parseManifests, withValuesFile, type K8sObject } from './helm.js';
import { objectPath, strictDryRunApply, type AdminAccess } from './server-validate.js';

const helmGone = helmMissing();
const skip = testenvUnavailable() || (helmGone ? missingComponent(helmGone, 'bash tools/scripts/setup.d/30-helm.sh') : false);

const NS = 'kube-system';
const COMPONENTS_CM = 'k8s-components-0123456789abcdef';
const CERT_CACHE = 'sev-snp-cert-cache';
const IDENTITY_BINDING = 'asterism-node-identity-0a1b2c3d-0000-4000-8000-00000000000a';
const PEM_A = '-----BEGIN CERTIFICATE-----\nQQ==\n-----END CERTIFICATE-----\n';

/** Resolves the HTTP status of a failed API call (or 0 when it succeeded). */
async function statusOf(call: () => Promise<unknown>): Promise<number> {
  try {
    await call();
    return 0;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'number') return code;
    const cause = (err as { cause?: { code?: unknown } }).cause?.code;
    if (typeof cause === 'number') return cause;
    if (err instanceof K8sError && err.code === 'K8S_FORBIDDEN') return 403;
    throw err;
  }
}

describe('asterism-services installed into a real kube-apiserver', { skip }, () => {
  let cp: TestControlPlane;
  let access: AdminAccess;
  let manifest: K8sObject[];
  let values: Record<string, unknown>;
  let installOutput: string;

  async function saClients(name: string): Promise<KubeClients> {
    const tr = await cp.admin.core.createNamespacedServiceAccountToken({
      name,
      namespace: NS,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [], expirationSeconds: 600 } },
    });
    assert.ok(tr.status?.token, `TokenRequest for ${name} returned a token`);
    return clientsFromConfig(cp.kubeconfigFor({ token: tr.status.token }));
  }

  before(async () => {
    cp = await startTestControlPlane();
    access = { server: cp.server, caPem: cp.pki.ca.certPem, certPem: cp.pki.admin.certPem, keyPem: cp.pki.admin.keyPem };
    preparedCharts();
    values = umbrellaValues({ keyservice: { networkPolicy: { bootstrapperCIDRs: ['10.0.0.0/24'] } } });
    const out = withValuesFile(values, (args) =>
      helm(['install', 'asterism', `${preparedCharts()}/asterism-services`, '--namespace', NS, '--kubeconfig', cp.adminKubeconfigPath, '--timeout', '120s', ...args], { timeoutMs: 180_000 }),
    );
    assert.equal(out.status, 0, `helm install failed: ${out.stderr}`);
    installOutput = out.stdout;
    manifest = parseManifests(helmOk(['get', 'manifest', 'asterism', '--namespace', NS, '--kubeconfig', cp.adminKubeconfigPath]));
  });
  after(async () => {
    await cp?.stop();
  });

  it('helm install succeeds and reports the release deployed', () => {
    const st = JSON.parse(helmOk(['status', 'asterism', '--namespace', NS, '--kubeconfig', cp.adminKubeconfigPath, '-o', 'json'])) as { info: { status: string } };
    assert.equal(st.info.status, 'deployed');
  });

  it('every object exists and passes a strict server-side dry-run apply; the CRDs are established', async () => {
    const kinds = manifest.map((o) => o.kind).sort();
    assert.deepEqual(
      [...new Set(kinds)],
      ['ClusterRole', 'ClusterRoleBinding', 'DaemonSet', 'Deployment', 'NetworkPolicy', 'Role', 'RoleBinding', 'Secret', 'Service', 'ServiceAccount'],
    );
    for (const obj of manifest) {
      const got = await adminGet(cp, objectPath(obj, NS));
      assert.equal(got.status, 200, `${obj.kind} ${obj.metadata.name} exists`);
      const dry = await strictDryRunApply(access, obj);
      assert.equal(dry.status, 200, `${obj.kind} ${obj.metadata.name} strict validation: ${dry.body}`);
    }
    for (const crd of ['joiningnodes', 'nodeversions']) {
      const r = await adminGet(cp, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}.${UPDATE_GROUP}`);
      assert.equal(r.status, 200);
      const conds = (JSON.parse(r.body) as { status: { conditions: Array<{ type: string; status: string }> } }).status.conditions;
      assert.ok(conds.some((c) => c.type === 'Established' && c.status === 'True'), `${crd} established`);
    }
  });

  it('strict validation is real: an unknown field is rejected by the server (negative control)', async () => {
    const ds = structuredClone(manifest.find((o) => o.kind === 'DaemonSet' && o.metadata.name === 'key-service')!) as K8sObject & { spec: { template: { spec: { containers: Array<Record<string, unknown>> } } } };
    ds.spec.template.spec.containers[0]!.imagePullPolcy = 'Always';
    const dry = await strictDryRunApply(access, ds);
    assert.notEqual(dry.status, 200);
    // Server-side apply builds a typed object from the schema; an undeclared field fails that step.
    assert.match(dry.body, /containers\[name=\\"key-service\\"\]\.imagePullPolcy: field not declared in schema/);
  });

  it("the joinservice's ServiceAccount can do exactly the joinservice's calls", async () => {
    // Cluster state the joinservice expects (written by the bootstrapper / operator in a real cluster).
    const components = [{ url: 'https://example.invalid/kubelet', hash: `sha256:${'0'.repeat(64)}`, installPath: '/run/state/bin/kubelet', extract: false }];
    await cp.admin.core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: COMPONENTS_CM }, data: { components: encodeComponents(components) } } });
    await cp.admin.custom.createClusterCustomObject({
      group: UPDATE_GROUP,
      version: UPDATE_VERSION,
      plural: 'nodeversions',
      body: { apiVersion: `${UPDATE_GROUP}/${UPDATE_VERSION}`, kind: 'NodeVersion', metadata: { name: 'constellation-version' }, spec: { kubernetesComponentsReference: COMPONENTS_CM } },
    });

    const sa = await saClients('join-service');
    const who = (await sa.config.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } })) as k8s.V1SelfSubjectReview;
    assert.equal(who.status?.userInfo?.username, 'system:serviceaccount:kube-system:join-service');

    // Bootstrap token Secret in kube-system (kubeadm token phase).
    const token = await new BootstrapTokenIssuer(sa.core).create({ ttlMs: JOIN_TOKEN_TTL_MS });
    const stored = await cp.admin.core.readNamespacedSecret({ namespace: NS, name: `bootstrap-token-${token.id}` });
    assert.equal(stored.type, 'bootstrap.kubernetes.io/token');

    // NodeVersion -> components ConfigMap.
    const ref = await new NodeVersionReader(sa.custom).componentsReference();
    assert.equal(ref, COMPONENTS_CM);
    const cms = new ConfigMapStore(sa.core);
    assert.deepEqual(decodeComponents((await cms.getKey(NS, ref, 'components'))!), components);

    // JoiningNode: server-side apply for workers (twice: idempotent), create for a control plane,
    // a second concurrent control-plane join is refused by the server (409, not 403).
    const writer = new JoiningNodeWriter(sa.custom);
    await writer.add({ nodeName: 'worker-1', componentsReference: ref, isControlPlane: false });
    await writer.add({ nodeName: 'worker-1', componentsReference: ref, isControlPlane: false });
    await writer.add({ nodeName: 'cp-2', componentsReference: ref, isControlPlane: true });
    await assert.rejects(writer.add({ nodeName: 'cp-3', componentsReference: ref, isControlPlane: true }), (e: K8sError) => e.code === 'CONTROL_PLANE_JOIN_IN_PROGRESS');
    const jn = (await cp.admin.custom.getClusterCustomObject({ group: UPDATE_GROUP, version: UPDATE_VERSION, plural: 'joiningnodes', name: 'worker-1' })) as { spec: Record<string, unknown>; metadata: { managedFields: Array<{ manager: string }> } };
    assert.equal(jn.spec.componentsreference, COMPONENTS_CM);
    assert.ok(jn.metadata.managedFields.some((f) => f.manager === 'join-service'));

    // SNP certificate cache: read (absent), create, read, update one key (the reference's RBAC forgot update).
    assert.equal(await cms.get(NS, CERT_CACHE), null);
    await cms.create(NS, CERT_CACHE, { ask: '', ark: PEM_A });
    assert.equal(await cms.getKey(NS, CERT_CACHE, 'ark'), PEM_A);
    await cms.updateKeys(NS, CERT_CACHE, { ask: PEM_A });
    assert.equal((await cp.admin.core.readNamespacedConfigMap({ namespace: NS, name: CERT_CACHE })).data?.ask, PEM_A);

    // Node identity binding (docs/adr/0008): an immutable ConfigMap, created once; a second create is 409.
    await cms.create(NS, IDENTITY_BINDING, { akDigest: 'sha256:00', nodeName: 'worker-1' }, { immutable: true });
    assert.equal(await cms.getKey(NS, IDENTITY_BINDING, 'nodeName'), 'worker-1');
    await assert.rejects(cms.create(NS, IDENTITY_BINDING, { akDigest: 'sha256:01', nodeName: 'worker-2' }, { immutable: true }), (e: K8sError) => e.code === 'K8S_ALREADY_EXISTS');
  });

  it("the joinservice's ServiceAccount is refused everything else (403)", async () => {
    const sa = await saClients('join-service');
    const forbidden: Array<[string, () => Promise<unknown>]> = [
      ['list Secrets cluster-wide', () => sa.core.listSecretForAllNamespaces()],
      ['list Secrets in kube-system', () => sa.core.listNamespacedSecret({ namespace: NS })],
      ['read the master secret', () => sa.core.readNamespacedSecret({ namespace: NS, name: 'constellation-mastersecret' })],
      ['read a bootstrap token Secret', () => sa.core.readNamespacedSecret({ namespace: NS, name: 'bootstrap-token-abcdef' })],
      ['create a Secret in default', () => sa.core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'x' } } })],
      ['update the components ConfigMap', () => cp.admin.core.readNamespacedConfigMap({ namespace: NS, name: COMPONENTS_CM }).then((cm) => sa.core.replaceNamespacedConfigMap({ namespace: NS, name: COMPONENTS_CM, body: cm }))],
      ['delete the cert cache', () => sa.core.deleteNamespacedConfigMap({ namespace: NS, name: CERT_CACHE })],
      ['rebind a disk (update its identity binding)', () => cp.admin.core.readNamespacedConfigMap({ namespace: NS, name: IDENTITY_BINDING }).then((cm) => sa.core.replaceNamespacedConfigMap({ namespace: NS, name: IDENTITY_BINDING, body: cm }))],
      ['unbind a disk (delete its identity binding)', () => sa.core.deleteNamespacedConfigMap({ namespace: NS, name: IDENTITY_BINDING })],
      ['read a ConfigMap outside kube-system', () => sa.core.readNamespacedConfigMap({ namespace: 'default', name: 'kube-root-ca.crt' })],
      ['read another NodeVersion', () => sa.custom.getClusterCustomObject({ group: UPDATE_GROUP, version: UPDATE_VERSION, plural: 'nodeversions', name: 'other' })],
      ['list JoiningNodes', () => sa.custom.listClusterCustomObject({ group: UPDATE_GROUP, version: UPDATE_VERSION, plural: 'joiningnodes' })],
      ['delete a JoiningNode', () => sa.custom.deleteClusterCustomObject({ group: UPDATE_GROUP, version: UPDATE_VERSION, plural: 'joiningnodes', name: 'worker-1' })],
      ['create a RoleBinding', () => sa.config.makeApiClient(k8s.RbacAuthorizationV1Api).createNamespacedRoleBinding({ namespace: NS, body: { metadata: { name: 'x' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [] } })],
      ['list Pods', () => sa.core.listNamespacedPod({ namespace: NS })],
    ];
    for (const [what, call] of forbidden) assert.equal(await statusOf(call), 403, `${what} must be forbidden`);
  });

  it("the keyservice's ServiceAccount has no API access at all (it reads its Secret from the volume)", async () => {
    const sa = await saClients('key-service');
    for (const [what, call] of [
      ['read its own master secret', () => sa.core.readNamespacedSecret({ namespace: NS, name: 'constellation-mastersecret' })],
      ['list Secrets', () => sa.core.listNamespacedSecret({ namespace: NS })],
      ['read a ConfigMap', () => sa.core.readNamespacedConfigMap({ namespace: NS, name: COMPONENTS_CM })],
    ] as const) {
      assert.equal(await statusOf(call), 403, `${what} must be forbidden`);
    }
    const secret = await cp.admin.core.readNamespacedSecret({ namespace: NS, name: 'constellation-mastersecret' });
    assert.equal(secret.immutable, true);
    const ks = values.keyservice as { masterSecret: string; salt: string };
    assert.deepEqual(secret.data, { mastersecret: ks.masterSecret, salt: ks.salt });
  });

  it("the verification service: NodePorts 30081/30080 answered by each node's own pod, a ServiceAccount with no API access", async () => {
    const svc = await cp.admin.core.readNamespacedService({ namespace: NS, name: 'verification-service' });
    assert.equal(svc.spec?.type, 'NodePort');
    assert.equal(svc.spec?.externalTrafficPolicy, 'Local');
    assert.deepEqual(svc.spec?.ports?.map((p) => [p.name, p.nodePort]), [['grpc', 30081], ['http', 30080]]);
    assert.match(installOutput, /verification-service on every node \(NodePorts 30081\/30080\)/, 'NOTES name the NodePorts');
    const sa = await saClients('verification-service');
    for (const [what, call] of [
      ['list Pods', () => sa.core.listNamespacedPod({ namespace: NS })],
      ['read a Node', () => sa.core.readNode({ name: 'any' })],
      ['read the master secret', () => sa.core.readNamespacedSecret({ namespace: NS, name: 'constellation-mastersecret' })],
      ['read a ConfigMap', () => sa.core.readNamespacedConfigMap({ namespace: NS, name: 'join-config' })],
    ] as const) {
      assert.equal(await statusOf(call), 403, `${what} must be forbidden`);
    }
  });

  it("the attestation monitor's ServiceAccount can do exactly the monitor's calls, and nothing else", async () => {
    await cp.admin.core.createNode({ body: { metadata: { name: 'monitored-1' } } });
    await cp.admin.core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'join-config' }, data: { attestationConfig: '{}' } } }).catch(() => undefined);
    const sa = await saClients('attestation-monitor');
    const status = new NodeStatusWriter(sa.core);
    const node = (await status.get('monitored-1'))!;
    const at = new Date();
    await status.setCondition(node, { node: 'monitored-1', status: 'Refused', reason: 'MeasurementMismatch', field: 'PCR[9]', message: 'differs', at, latencyMs: 1 });
    await status.setEvidence('monitored-1', { variant: 'qemu-vtpm', at: at.toISOString(), registers: 'PCR', values: {}, akDigest: `sha256:${'ab'.repeat(32)}` });
    assert.equal(await status.setQuarantineTaint('monitored-1', true, 'MeasurementMismatch'), true);
    await status.event(node, 'Warning', 'AttestationQuarantined', 'test');
    assert.ok((await cp.admin.core.readNode({ name: 'monitored-1' })).spec?.taints?.some((t) => t.key === QUARANTINE_TAINT));
    const deny = new DenyListStore(sa.core);
    await deny.add([{ kind: 'disk', id: 'aaaaaaaa-0000-4000-8000-00000000000a', node: 'monitored-1', reason: 'r', since: at.toISOString() }]);
    assert.equal(await deny.removeNode('monitored-1'), 1);
    assert.deepEqual(await new BoundDisks(sa.core).of('monitored-1'), []);
    assert.equal((await sa.core.readNamespacedConfigMap({ namespace: NS, name: 'join-config' })).data?.attestationConfig, '{}');
    const leases = sa.config.makeApiClient(k8s.CoordinationV1Api);
    await leases.createNamespacedLease({ namespace: NS, body: { metadata: { name: 'asterism-attestation-monitor' }, spec: { holderIdentity: 'pod-a', leaseDurationSeconds: 15 } } });
    const lease = await leases.readNamespacedLease({ namespace: NS, name: 'asterism-attestation-monitor' });
    await leases.replaceNamespacedLease({ namespace: NS, name: 'asterism-attestation-monitor', body: lease });
    const forbidden: Array<[string, () => Promise<unknown>]> = [
      ['read a Secret', () => sa.core.readNamespacedSecret({ namespace: NS, name: 'constellation-mastersecret' })],
      ['list Secrets', () => sa.core.listNamespacedSecret({ namespace: NS })],
      ['delete a Node', () => sa.core.deleteNode({ name: 'monitored-1' })],
      ['change join-config', () => cp.admin.core.readNamespacedConfigMap({ namespace: NS, name: 'join-config' }).then((cm) => sa.core.replaceNamespacedConfigMap({ namespace: NS, name: 'join-config', body: cm }))],
      ['read another ConfigMap by name', () => sa.core.readNamespacedConfigMap({ namespace: NS, name: COMPONENTS_CM })],
      ['delete the deny list', () => sa.core.deleteNamespacedConfigMap({ namespace: NS, name: 'asterism-attestation-denylist' })],
      ['take over another Lease', () => leases.readNamespacedLease({ namespace: NS, name: 'kube-scheduler' })],
      ['list Pods', () => sa.core.listNamespacedPod({ namespace: NS })],
      ['evict a Pod', () => sa.core.deleteNamespacedPod({ namespace: NS, name: 'any' })],
    ];
    for (const [what, call] of forbidden) assert.equal(await statusOf(call), 403, `${what} must be forbidden`);
  });

  it('helm uninstall removes the release objects and keeps the CRDs (Helm 3 policy)', async () => {
    helmOk(['uninstall', 'asterism', '--namespace', NS, '--kubeconfig', cp.adminKubeconfigPath]);
    for (const obj of manifest) {
      // Deletion of DaemonSets is asynchronous (garbage collector); the objects must be gone or terminating.
      const r = await adminGet(cp, objectPath(obj, NS));
      if (r.status === 200) assert.ok((JSON.parse(r.body) as { metadata: { deletionTimestamp?: string } }).metadata.deletionTimestamp, `${obj.kind} ${obj.metadata.name} deleted`);
      else assert.equal(r.status, 404);
    }
    assert.equal((await adminGet(cp, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/joiningnodes.${UPDATE_GROUP}`)).status, 200);
  });
});
