/**
 * The charts with the real Helm 3 binary: `helm lint --strict`, `helm template` with several values
 * sets (every rendered object validated against the Kubernetes schemas of kubernetes-models, and
 * the docs/protocol/helm.md layout asserted), and schema errors for misspelled or invalid values.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { missingComponent } from '@asterism/testing';
import { joinserviceValues, keyserviceValues, umbrellaValues } from './chart-values.fixture.js';
import { helm, helmMissing, preparedCharts, renderChart, withValuesFile, type K8sObject } from './helm.js';
import { validateWithModels } from './validate.js';

const missing = helmMissing();
const skip = missing ? missingComponent(missing, 'bash tools/scripts/setup.d/30-helm.sh') : false;

type Obj = K8sObject & Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function find(objs: K8sObject[], kind: string, name: string): Obj {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  assert.ok(o, `${kind} ${name} rendered (got ${objs.map((x) => `${x.kind}/${x.metadata.name}`).join(', ')})`);
  return o as Obj;
}

async function validateAll(objs: K8sObject[]): Promise<void> {
  assert.ok(objs.length > 0);
  for (const o of objs) await validateWithModels(o);
}

function templateError(chart: string, values: Record<string, unknown>, namespace = 'kube-system'): string {
  return withValuesFile(values, (args) => {
    const r = helm(['template', 'x', join(preparedCharts(), chart), '--namespace', namespace, ...args]);
    assert.notEqual(r.status, 0, `helm template of ${chart} must fail`);
    return r.stderr;
  });
}

describe('helm charts (real helm 3)', { skip }, () => {
  before(() => preparedCharts());

  it('helm is Helm 3', () => {
    assert.match(helm(['version', '--short']).stdout, /^v3\./);
  });

  for (const [chart, values] of [
    ['joinservice', joinserviceValues()],
    ['keyservice', keyserviceValues()],
    ['asterism-services', umbrellaValues()],
  ] as const) {
    it(`helm lint --strict passes for ${chart}`, () => {
      withValuesFile(values, (args) => {
        const r = helm(['lint', '--strict', '--namespace', 'kube-system', join(preparedCharts(), chart), ...args]);
        assert.equal(r.status, 0, r.stdout + r.stderr);
        assert.match(r.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
      });
    });
  }

  it('validation catches a schema violation (negative control for kubernetes-models)', async () => {
    const ds = find(renderChart('keyservice', keyserviceValues()), 'DaemonSet', 'key-service');
    ds.spec.template.spec.containers[0].ports[0].containerPort = 'grpc';
    await assert.rejects(validateWithModels(ds), /containerPort must be integer/);
  });

  it('joinservice (defaults): the reference layout with least privilege', async () => {
    const objs = renderChart('joinservice', joinserviceValues());
    await validateAll(objs);
    const ds = find(objs, 'DaemonSet', 'join-service');
    assert.equal(ds.metadata.namespace, 'kube-system');
    assert.equal(ds.metadata.labels?.['k8s-app'], 'join-service');
    assert.equal(ds.metadata.labels?.['kubernetes.io/cluster-service'], 'true');
    const pod = ds.spec.template.spec;
    assert.equal(pod.priorityClassName, 'system-cluster-critical');
    assert.equal(pod.serviceAccountName, 'join-service');
    assert.deepEqual(pod.nodeSelector, { 'node-role.kubernetes.io/control-plane': '' });
    assert.equal(pod.hostNetwork, undefined, 'no host network');
    assert.deepEqual(
      pod.tolerations.map((t: Record<string, string>) => `${t.key ?? '*'}:${t.operator}:${t.effect ?? '*'}`),
      ['CriticalAddonsOnly:Exists:*', 'node-role.kubernetes.io/master:Exists:NoSchedule', 'node-role.kubernetes.io/control-plane:Exists:NoSchedule', '*:Exists:NoExecute', '*:Exists:NoSchedule'],
    );
    const c = pod.containers[0];
    assert.equal(c.image, 'registry.example/asterism/joinservice:0.1.0');
    assert.ok(c.args.includes('--cloud-provider=qemu'));
    assert.ok(c.args.includes('--key-service-endpoint=key-service.kube-system:9000'));
    assert.ok(c.args.includes('--attestation-variant=qemu-vtpm'));
    assert.ok(c.args.includes('--metrics-port=9092'));
    assert.ok(c.args.includes('--identity-binding=strict'), 'identity binding is strict by default (docs/adr/0008)');
    assert.deepEqual(c.ports.map((p: { name: string; containerPort: number }) => `${p.name}=${p.containerPort}`), ['tcp=9090', 'metrics=9092']);
    assert.deepEqual(c.securityContext, { privileged: false, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault');
    assert.ok(c.resources.requests.cpu && c.resources.requests.memory && c.resources.limits.memory);
    assert.equal(c.livenessProbe.tcpSocket.port, 'tcp');
    assert.equal(c.readinessProbe.tcpSocket.port, 'tcp');
    const tpl = ds.spec.template.metadata;
    assert.deepEqual([tpl.annotations['prometheus.io/scrape'], tpl.annotations['prometheus.io/port'], tpl.annotations['prometheus.io/path']], ['true', '9092', '/metrics']);
    const mounts = Object.fromEntries(c.volumeMounts.map((m: { name: string; mountPath: string; readOnly?: boolean }) => [m.name, `${m.mountPath}${m.readOnly ? ':ro' : ''}`]));
    assert.deepEqual(mounts, { config: '/var/config:ro', kubeadm: '/etc/kubernetes:ro', 'kubeadm-config': '/var/kubeadm-config:ro', tmp: '/tmp' });
    const vols = Object.fromEntries(pod.volumes.map((v: Record<string, unknown> & { name: string }) => [v.name, v]));
    assert.deepEqual(
      vols.config.projected.sources.map((s: { configMap: { name: string } }) => s.configMap.name),
      ['join-config', 'internal-config'],
    );
    assert.equal(vols.kubeadm.hostPath.path, '/etc/kubernetes');
    assert.equal(vols['kubeadm-config'].configMap.name, 'kubeadm-config');

    const svc = find(objs, 'Service', 'join-service');
    assert.equal(svc.spec.type, 'NodePort');
    assert.equal(svc.spec.externalTrafficPolicy, 'Cluster');
    assert.deepEqual(svc.spec.ports, [{ name: 'grpc', protocol: 'TCP', port: 9090, targetPort: 9090, nodePort: 30090 }]);
    assert.deepEqual(svc.spec.selector, { 'k8s-app': 'join-service' });

    // RBAC: exactly these rules, nothing on Secrets but create, update only of the cert cache.
    assert.deepEqual(find(objs, 'Role', 'join-service').rules, [
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['sev-snp-cert-cache', 'asterism-collateral-tdx-pcs', 'asterism-collateral-sev-snp-vcek', 'asterism-collateral-sev-snp-cert-chain'], verbs: ['update'] },
    ]);
    assert.equal(find(objs, 'Role', 'join-service').metadata.namespace, 'kube-system');
    assert.deepEqual(find(objs, 'ClusterRole', 'join-service').rules, [
      { apiGroups: ['update.edgeless.systems'], resources: ['nodeversions'], resourceNames: ['constellation-version'], verbs: ['get'] },
      { apiGroups: ['update.edgeless.systems'], resources: ['joiningnodes'], verbs: ['create', 'patch'] },
    ]);
    assert.deepEqual(find(objs, 'ClusterRoleBinding', 'join-service').subjects, [{ kind: 'ServiceAccount', name: 'join-service', namespace: 'kube-system' }]);
    assert.deepEqual(
      objs.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata.name),
      ['joiningnodes.update.edgeless.systems', 'nodeversions.update.edgeless.systems'],
    );
  });

  for (const [csp, variant] of [
    ['Azure', 'azure-sev-snp'],
    ['AWS', 'aws-sev-snp'],
    ['GCP', 'gcp-sev-snp'],
  ] as const) {
    it(`joinservice accepts ${variant} (csp ${csp}, collateral flags through extraArgs)`, async () => {
      const objs = renderChart('joinservice', joinserviceValues({ csp, attestationVariant: variant, extraArgs: ['--collateral-offline', '--amd-kds-url=http://kds-mirror.kube-system:8080'] }));
      await validateAll(objs);
      const c = find(objs, 'DaemonSet', 'join-service').spec.template.spec.containers[0];
      assert.ok(c.args.includes(`--attestation-variant=${variant}`) && c.args.includes(`--cloud-provider=${csp.toLowerCase()}`), c.args.join(' '));
      assert.ok(c.args.includes('--collateral-offline') && c.args.includes('--amd-kds-url=http://kds-mirror.kube-system:8080'));
    });
  }

  it('joinservice (GCP, digest, SSH mount, no RBAC, no annotations, extra args)', async () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    const objs = renderChart(
      'joinservice',
      joinserviceValues({
        csp: 'GCP',
        attestationVariant: 'gcp-sev-snp',
        image: { repository: 'registry.example/j', digest },
        sshStateHostPath: '/var/run/state/ssh',
        rbac: { create: false },
        prometheusAnnotations: false,
        extraArgs: ['--rate-limit=10'],
        // The compatibility switch (docs/adr/0008); written unquoted, YAML reads it as false.
        identityBinding: 'off',
        joinServiceNodePort: 31000,
        joinServiceExternalTrafficPolicy: 'Local',
        global: { keyServicePort: 9500 },
      }),
    );
    await validateAll(objs);
    assert.equal(objs.filter((o) => o.kind.startsWith('Role') || o.kind.startsWith('ClusterRole')).length, 0);
    const ds = find(objs, 'DaemonSet', 'join-service');
    const c = ds.spec.template.spec.containers[0];
    assert.equal(c.image, `registry.example/j@${digest}`);
    assert.ok(c.args.includes('--cloud-provider=gcp') && c.args.includes('--rate-limit=10') && c.args.includes('--key-service-endpoint=key-service.kube-system:9500'));
    assert.ok(c.args.includes('--identity-binding=off'));
    assert.deepEqual(c.env, [{ name: 'GOOGLE_APPLICATION_CREDENTIALS', value: '/var/secrets/google/key.json' }]);
    const vols = Object.fromEntries(ds.spec.template.spec.volumes.map((v: { name: string }) => [v.name, v]));
    assert.deepEqual(vols.gcekey.secret, { secretName: 'gcekey', optional: true });
    assert.equal(vols.ssh.hostPath.path, '/var/run/state/ssh');
    assert.equal(ds.spec.template.metadata.annotations, null);
    assert.equal(find(objs, 'Service', 'join-service').spec.ports[0].nodePort, 31000);
    assert.equal(find(objs, 'Service', 'join-service').spec.externalTrafficPolicy, 'Local');
  });

  for (const [variant, csp] of [['qemu-tdx', 'QEMU'], ['azure-tdx', 'Azure']] as const) {
    it(`joinservice (${variant}): the variant flag, offline TDX collateral, RBAC to update its collateral ConfigMap`, async () => {
      const objs = renderChart('joinservice', joinserviceValues({ csp, attestationVariant: variant, extraArgs: ['--collateral-offline'] }));
      await validateAll(objs);
      const c = find(objs, 'DaemonSet', 'join-service').spec.template.spec.containers[0];
      assert.ok(c.args.includes(`--attestation-variant=${variant}`) && c.args.includes(`--cloud-provider=${csp.toLowerCase()}`) && c.args.includes('--collateral-offline'), c.args.join(' '));
      const rules = find(objs, 'Role', 'join-service').rules as { resources: string[]; resourceNames?: string[]; verbs: string[] }[];
      assert.ok(rules.some((r) => r.resources.includes('configmaps') && r.resourceNames?.includes('asterism-collateral-tdx-pcs') && r.verbs.includes('update')));
    });
  }

  const cloudVariants: Array<[variant: string, csp: string, flag: string]> = [
    ['azure-trustedlaunch', 'Azure', 'azure'],
    ['aws-nitro-tpm', 'AWS', 'aws'],
    ['gcp-sev-es', 'GCP', 'gcp'],
  ];
  for (const [variant, csp, flag] of cloudVariants) {
    it(`joinservice (${csp}, ${variant}): the variant and provider reach the flags`, async () => {
      const objs = renderChart('joinservice', joinserviceValues({ csp, attestationVariant: variant }));
      await validateAll(objs);
      const c = find(objs, 'DaemonSet', 'join-service').spec.template.spec.containers[0];
      assert.ok(c.args.includes(`--attestation-variant=${variant}`), c.args.join(' '));
      assert.ok(c.args.includes(`--cloud-provider=${flag}`), c.args.join(' '));
    });
  }

  it('keyservice (defaults): immutable Secret, gRPC probes, non-root, no API access, NetworkPolicy', async () => {
    const values = keyserviceValues();
    const objs = renderChart('keyservice', values);
    await validateAll(objs);
    const secret = find(objs, 'Secret', 'constellation-mastersecret');
    assert.equal(secret.immutable, true);
    assert.deepEqual(secret.data, { mastersecret: values.masterSecret, salt: values.salt });
    const ds = find(objs, 'DaemonSet', 'key-service');
    const pod = ds.spec.template.spec;
    assert.equal(pod.automountServiceAccountToken, false);
    assert.equal(find(objs, 'ServiceAccount', 'key-service').automountServiceAccountToken, false);
    assert.deepEqual(pod.securityContext, { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } });
    const c = pod.containers[0];
    assert.deepEqual(c.args, ['--port=9000', '--metrics-port=9101', '--master-secret=/var/config/mastersecret', '--salt=/var/config/salt', '-v=0']);
    assert.deepEqual(c.livenessProbe.grpc, { port: 9000 });
    assert.deepEqual(c.readinessProbe.grpc, { port: 9000 });
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
    assert.equal(ds.spec.template.metadata.annotations['prometheus.io/port'], '9101');
    const projected = pod.volumes.find((v: { name: string }) => v.name === 'mastersecret').projected;
    assert.equal(projected.defaultMode, 0o440);
    assert.deepEqual(projected.sources[0].secret.items, [
      { key: 'mastersecret', path: 'mastersecret' },
      { key: 'salt', path: 'salt' },
    ]);
    const svc = find(objs, 'Service', 'key-service');
    assert.equal(svc.spec.type, 'ClusterIP');
    assert.deepEqual(svc.spec.ports, [{ name: 'grpc', protocol: 'TCP', port: 9000, targetPort: 9000 }]);
    assert.equal(objs.filter((o) => /Role/.test(o.kind)).length, 0, 'no RBAC for the keyservice');
    const np = find(objs, 'NetworkPolicy', 'key-service');
    assert.deepEqual(np.spec.podSelector, { matchLabels: { 'k8s-app': 'key-service' } });
    assert.deepEqual(np.spec.ingress[0], {
      ports: [{ protocol: 'TCP', port: 9000 }],
      from: [{ podSelector: { matchLabels: { 'k8s-app': 'join-service' } } }, { podSelector: { matchLabels: { 'asterism.dev/keyservice-client': 'true' } } }],
    });
    assert.deepEqual(np.spec.ingress[1], { ports: [{ protocol: 'TCP', port: 9101 }] });
  });

  it('keyservice (existing Secret, bootstrapper CIDRs, metrics peers, other port)', async () => {
    const objs = renderChart(
      'keyservice',
      keyserviceValues({
        createSecret: false,
        masterSecret: '',
        salt: '',
        global: { keyServicePort: 9500 },
        networkPolicy: { bootstrapperCIDRs: ['10.9.0.0/16', 'fd00::/64'], metricsFrom: [{ namespaceSelector: { matchLabels: { name: 'monitoring' } } }] },
      }),
    );
    await validateAll(objs);
    assert.equal(objs.filter((o) => o.kind === 'Secret').length, 0);
    const np = find(objs, 'NetworkPolicy', 'key-service');
    assert.deepEqual(np.spec.ingress[0].ports, [{ protocol: 'TCP', port: 9500 }]);
    assert.deepEqual(np.spec.ingress[0].from.slice(2), [{ ipBlock: { cidr: '10.9.0.0/16' } }, { ipBlock: { cidr: 'fd00::/64' } }]);
    assert.deepEqual(np.spec.ingress[1].from, [{ namespaceSelector: { matchLabels: { name: 'monitoring' } } }]);
    assert.equal(find(objs, 'DaemonSet', 'key-service').spec.template.spec.containers[0].readinessProbe.grpc.port, 9500);
  });

  it('asterism-services renders both subcharts with shared globals, and each can be turned off', async () => {
    const objs = renderChart('asterism-services', umbrellaValues({ global: { keyServicePort: 9400 } }));
    await validateAll(objs);
    const kinds = objs.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    for (const k of ['DaemonSet/join-service', 'DaemonSet/key-service', 'Service/join-service', 'Service/key-service', 'NetworkPolicy/key-service', 'CustomResourceDefinition/joiningnodes.update.edgeless.systems']) {
      assert.ok(kinds.includes(k), k);
    }
    assert.ok(find(objs, 'DaemonSet', 'join-service').spec.template.spec.containers[0].args.includes('--key-service-endpoint=key-service.kube-system:9400'));
    assert.equal(find(objs, 'Service', 'key-service').spec.ports[0].port, 9400);
    const onlyJoin = renderChart('asterism-services', umbrellaValues({ keyservice: { enabled: false } }));
    assert.equal(onlyJoin.filter((o) => o.metadata.name === 'key-service').length, 0);
    assert.ok(onlyJoin.some((o) => o.metadata.name === 'join-service'));
  });

  it('misspelled values fail with a schema error (top level, nested, through the umbrella)', () => {
    assert.match(templateError('joinservice', joinserviceValues({ attestationVarient: 'qemu-vtpm' })), /values don't meet the specifications of the schema[\s\S]*Additional property attestationVarient is not allowed/);
    assert.match(templateError('joinservice', joinserviceValues({ image: { repository: 'r/j', tga: 'v1' } })), /image: Additional property tga is not allowed/);
    assert.match(templateError('keyservice', keyserviceValues({ networkPolicy: { enabeld: false } })), /networkPolicy: Additional property enabeld is not allowed/);
    assert.match(templateError('asterism-services', umbrellaValues({ keyservice: { metricPort: 1 } })), /keyservice:\s*\n- \(root\): Additional property metricPort is not allowed/);
    assert.match(templateError('asterism-services', { ...umbrellaValues(), globl: {} }), /Additional property globl is not allowed/);
    assert.match(templateError('asterism-services', umbrellaValues({ global: { keyServicPort: 1 } })), /global: Additional property keyServicPort is not allowed/);
  });

  it('the minimum master secret (16 bytes) and salt (32 bytes) that validateInitRequest and the keyservice accept render', () => {
    const values = keyserviceValues({ masterSecret: Buffer.alloc(16, 1).toString('base64'), salt: Buffer.alloc(32, 2).toString('base64') });
    const secret = find(renderChart('keyservice', values), 'Secret', 'constellation-mastersecret') as unknown as { data: Record<string, string> };
    assert.equal(Buffer.from(secret.data.mastersecret!, 'base64').length, 16);
    assert.equal(Buffer.from(secret.data.salt!, 'base64').length, 32);
  });

  it('invalid values fail: missing image/variant, unknown variant, short keys, wrong namespace', () => {
    assert.match(templateError('joinservice', { attestationVariant: 'qemu-vtpm' }), /image\.repository: String length must be greater than or equal to 1/);
    assert.match(templateError('joinservice', joinserviceValues({ attestationVariant: 'qemu-vtmp' })), /attestationVariant: attestationVariant must be one of/);
    assert.match(templateError('joinservice', joinserviceValues({ csp: 'aws' })), /csp: csp must be one of/);
    assert.match(templateError('keyservice', keyserviceValues({ masterSecret: '' })), /masterSecret: String length must be greater than or equal to 24/);
    assert.match(templateError('keyservice', keyserviceValues({ masterSecret: Buffer.alloc(15, 1).toString('base64') })), /masterSecret: String length must be greater than or equal to 24/, '15 bytes: refused as by validateInitRequest');
    // Schema-valid base64 of only 31 bytes: the template's decoded-length check catches it.
    assert.match(templateError('keyservice', keyserviceValues({ salt: Buffer.alloc(31, 1).toString('base64') })), /salt must be the base64 of at least 32 bytes/);
    assert.match(templateError('keyservice', keyserviceValues({ salt: 'not base64!'.padEnd(44, '!') })), /salt: Does not match pattern/);
    assert.match(templateError('joinservice', joinserviceValues(), 'default'), /must be installed into kube-system/);
  });
});
