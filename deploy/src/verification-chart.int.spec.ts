/**
 * The verification-service chart with the real Helm 3 binary (docs/adr/0028): `helm lint
 * --strict`, `helm template` per TPM kind and variant (every object validated with
 * kubernetes-models), the privileges derived from what the TPM needs, the NodePort Service that
 * each node answers with its own pod, no API access, and schema errors for bad values.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { missingComponent } from '@asterism/testing';
import { umbrellaValues, verificationValues } from './chart-values.fixture.js';
import { helm, helmMissing, preparedCharts, renderChart, withValuesFile, type K8sObject } from './helm.js';
import { validateWithModels } from './validate.js';

const missing = helmMissing();
const skip = missing ? missingComponent(missing, 'bash tools/scripts/setup.d/30-helm.sh') : false;

type Obj = K8sObject & Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Named = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function find(objs: K8sObject[], kind: string, name: string): Obj {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  assert.ok(o, `${kind} ${name} rendered (got ${objs.map((x) => `${x.kind}/${x.metadata.name}`).join(', ')})`);
  return o as Obj;
}

/** Renders the chart, validates every object, returns the objects and the pod of the DaemonSet. */
async function render(values: Record<string, unknown>) {
  const objs = renderChart('verificationservice', values);
  for (const o of objs) await validateWithModels(o);
  const pod = find(objs, 'DaemonSet', 'verification-service').spec.template.spec;
  const byName = (list: Named[] | undefined): Named => Object.fromEntries((list ?? []).map((v) => [v.name, v]));
  return { objs, pod, c: pod.containers[0], mounts: byName(pod.containers[0].volumeMounts), volumes: byName(pod.volumes) };
}

function templateError(values: Record<string, unknown>, chart = 'verificationservice'): string {
  return withValuesFile(values, (args) => {
    const r = helm(['template', 'x', join(preparedCharts(), chart), '--namespace', 'kube-system', ...args]);
    assert.notEqual(r.status, 0, `helm template of ${chart} must fail`);
    return r.stderr;
  });
}

const UNPRIVILEGED = { privileged: false, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } };

describe('verification-service chart (real helm 3)', { skip }, () => {
  before(() => preparedCharts());

  it('helm lint --strict passes', () => {
    withValuesFile(verificationValues(), (args) => {
      const r = helm(['lint', '--strict', '--namespace', 'kube-system', join(preparedCharts(), 'verificationservice'), ...args]);
      assert.equal(r.status, 0, r.stdout + r.stderr);
    });
  });

  it('defaults (TPM device): a DaemonSet on every node, privileged for the device, the reference ports, no API access', async () => {
    const { objs, pod, c, mounts, volumes } = await render(verificationValues());
    assert.deepEqual(objs.map((o) => `${o.kind}/${o.metadata.name}`).sort(), ['DaemonSet/verification-service', 'Service/verification-service', 'ServiceAccount/verification-service']);
    assert.deepEqual(pod.tolerations, [{ operator: 'Exists' }], 'every node, whatever its taints');
    assert.equal(pod.nodeSelector, undefined);
    assert.equal(pod.priorityClassName, 'system-node-critical');
    assert.equal(pod.hostNetwork, undefined, 'own network namespace: reached through the NodePort');
    assert.equal(pod.automountServiceAccountToken, false);
    assert.equal(find(objs, 'ServiceAccount', 'verification-service').automountServiceAccountToken, false);
    assert.deepEqual(pod.securityContext, { runAsUser: 0, runAsGroup: 0, seccompProfile: { type: 'RuntimeDefault' } });
    assert.equal(c.image, 'registry.example/asterism/verification-service:0.1.0');
    assert.deepEqual(c.args, ['--attestation-variant=qemu-vtpm', '--tpm=/dev/tpmrm0', '--grpc-port=9090', '--http-port=8080', '-v=0']);
    assert.deepEqual(c.ports, [
      { name: 'grpc', containerPort: 9090, protocol: 'TCP' },
      { name: 'http', containerPort: 8080, protocol: 'TCP' },
    ]);
    assert.deepEqual(c.securityContext, { privileged: true, readOnlyRootFilesystem: true });
    assert.deepEqual([mounts.tpm.mountPath, volumes.tpm.hostPath], ['/dev/tpmrm0', { path: '/dev/tpmrm0', type: 'CharDevice' }]);
    assert.deepEqual([mounts['event-log'].mountPath, mounts['event-log'].readOnly, volumes['event-log'].hostPath.path], ['/sys/kernel/security', true, '/sys/kernel/security']);
    assert.equal(volumes.configfs, undefined);
    assert.deepEqual([c.livenessProbe.tcpSocket, c.readinessProbe.tcpSocket], [{ port: 'grpc' }, { port: 'grpc' }], 'TCP probes: no TPM use per probe');
    assert.ok(c.resources.requests.memory && c.resources.limits.memory);

    const svc = find(objs, 'Service', 'verification-service');
    assert.equal(svc.spec.type, 'NodePort');
    assert.equal(svc.spec.externalTrafficPolicy, 'Local', "a node's NodePort is answered by that node's pod only");
    assert.deepEqual(svc.spec.selector, { 'k8s-app': 'verification-service' });
    assert.deepEqual(svc.spec.ports, [
      { name: 'grpc', protocol: 'TCP', port: 9090, targetPort: 'grpc', nodePort: 30081 },
      { name: 'http', protocol: 'TCP', port: 8080, targetPort: 'http', nodePort: 30080 },
    ]);
    assert.equal(find(objs, 'DaemonSet', 'verification-service').spec.template.metadata.labels['k8s-app'], 'verification-service');
    assert.equal(objs.filter((o) => /Role/.test(o.kind)).length, 0, 'no RBAC');
  });

  it('TPM socket (swtpm, the local real nodes): unix: flag, Socket hostPath, not privileged, no capability', async () => {
    const { c, mounts, volumes } = await render(verificationValues({ tpm: { kind: 'socket', hostPath: '/run/asterism/swtpm.sock' }, firmwareEventLog: false }));
    assert.ok(c.args.includes('--tpm=unix:/run/asterism/swtpm.sock'), c.args.join(' '));
    assert.deepEqual(c.securityContext, UNPRIVILEGED);
    assert.deepEqual([mounts.tpm.mountPath, volumes.tpm.hostPath], ['/run/asterism/swtpm.sock', { path: '/run/asterism/swtpm.sock', type: 'Socket' }]);
    assert.deepEqual(Object.keys(volumes), ['tpm'], 'no event log, no configfs');
  });

  it('tpmOverride (VM nodes with /dev/tpmrm0 beside namespace nodes with a socket): two DaemonSets that split the nodes, each with its own TPM and privileges', async () => {
    const selector = { 'asterism.dev/tpm': 'swtpm-socket' };
    const { objs, pod, c } = await render(verificationValues({ tpmOverride: { nodeSelector: selector, kind: 'socket', hostPath: '/run/asterism/swtpm.sock' } }));
    assert.deepEqual(objs.filter((o) => o.kind === 'DaemonSet').map((o) => o.metadata.name).sort(), ['verification-service', 'verification-service-tpm-override']);
    // Main: the device, privileged, on every node but the selected ones.
    assert.ok(c.args.includes('--tpm=/dev/tpmrm0'));
    assert.equal(c.securityContext.privileged, true);
    assert.deepEqual(pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms, [{ matchExpressions: [{ key: 'asterism.dev/tpm', operator: 'NotIn', values: ['swtpm-socket'] }] }]);
    // Override: the socket, unprivileged, only on the selected nodes; its own selector label.
    const ds = find(objs, 'DaemonSet', 'verification-service-tpm-override');
    const opod = ds.spec.template.spec;
    const oc = opod.containers[0];
    assert.deepEqual(opod.nodeSelector, selector);
    assert.equal(opod.affinity, undefined);
    assert.ok(oc.args.includes('--tpm=unix:/run/asterism/swtpm.sock'), oc.args.join(' '));
    assert.deepEqual(oc.securityContext, UNPRIVILEGED);
    assert.deepEqual(opod.volumes.find((v: Named) => v.name === 'tpm').hostPath, { path: '/run/asterism/swtpm.sock', type: 'Socket' });
    assert.deepEqual(ds.spec.selector.matchLabels, { 'k8s-app': 'verification-service', 'asterism.dev/tpm-override': 'true' });
    assert.equal(ds.spec.template.metadata.labels['asterism.dev/tpm-override'], 'true');
    // One Service answers from either pod (its selector is the common label).
    assert.deepEqual(find(objs, 'Service', 'verification-service').spec.selector, { 'k8s-app': 'verification-service' });
    // Without an override: one DaemonSet, no affinity (the defaults test checks the rest).
    const plain = await render(verificationValues());
    assert.equal(plain.objs.filter((o) => o.kind === 'DaemonSet').length, 1);
    assert.equal(plain.pod.affinity, undefined);
  });

  for (const [variant, tpm, kind] of [
    ['qemu-tdx', false, 'no TPM: configfs-tsm only'],
    ['aws-sev-snp', true, 'TPM + configfs-tsm'],
    ['gcp-sev-snp', true, 'TPM + configfs-tsm'],
  ] as const) {
    it(`${variant} (${kind}): privileged for configfs-tsm, even with a TPM socket`, async () => {
      const { c, volumes } = await render(verificationValues({ attestationVariant: variant, tpm: { kind: 'socket', hostPath: '/run/tpm.sock' } }));
      assert.equal(c.args.some((a: string) => a.startsWith('--tpm=')), tpm, c.args.join(' '));
      assert.equal(volumes.tpm !== undefined, tpm);
      assert.deepEqual(volumes.configfs.hostPath, { path: '/sys/kernel/config', type: 'Directory' });
      assert.equal(c.securityContext.privileged, true);
    });
  }

  it('other ports, a digest, extra flags and labels reach the objects', async () => {
    const digest = `sha256:${'cd'.repeat(32)}`;
    const { objs, c } = await render(
      verificationValues({ image: { repository: 'r/v', digest }, grpcPort: 9190, httpPort: 8180, nodePorts: { grpc: 31081, http: 31080 }, extraArgs: ['--state-root=/host'], logVerbosity: -1, podLabels: { team: 'ops' } }),
    );
    assert.equal(c.image, `r/v@${digest}`);
    assert.deepEqual(c.args.slice(2), ['--grpc-port=9190', '--http-port=8180', '-v=-1', '--state-root=/host']);
    assert.deepEqual(find(objs, 'Service', 'verification-service').spec.ports.map((p: { port: number; nodePort: number }) => [p.port, p.nodePort]), [[9190, 31081], [8180, 31080]]);
    assert.equal(find(objs, 'DaemonSet', 'verification-service').spec.template.metadata.labels.team, 'ops');
  });

  it('the umbrella chart renders it beside the services, with its own values, and can turn it off', async () => {
    const objs = renderChart('asterism-services', umbrellaValues({ verificationservice: { tpm: { kind: 'socket', hostPath: '/run/asterism/swtpm.sock' } } }));
    for (const o of objs) await validateWithModels(o);
    assert.ok(find(objs, 'DaemonSet', 'verification-service').spec.template.spec.containers[0].args.includes('--tpm=unix:/run/asterism/swtpm.sock'));
    assert.ok(objs.some((o) => o.metadata.name === 'join-service') && objs.some((o) => o.metadata.name === 'key-service'));
    const without = renderChart('asterism-services', umbrellaValues({ verificationservice: { enabled: false } }));
    assert.equal(without.filter((o) => o.metadata.name === 'verification-service').length, 0);
  });

  it('bad values fail with the reason: schema errors, and no way to widen the privileges', () => {
    for (const [values, reason] of [
      [{ image: { repository: 'r/v' } }, /attestationVariant: attestationVariant must be one of the following/],
      [verificationValues({ attestationVariant: 'qemu-vtmp' }), /attestationVariant: attestationVariant must be one of/],
      [verificationValues({ tpm: { kind: 'file', hostPath: '/dev/tpmrm0' } }), /tpm\.kind: tpm\.kind must be one of the following: "device", "socket"/],
      [verificationValues({ tpm: { kind: 'socket', hostPath: 'tpm.sock' } }), /tpm\.hostPath: Does not match pattern/],
      [verificationValues({ tpm: { kind: 'device', hostpath: '/dev/tpm0' } }), /tpm: Additional property hostpath is not allowed/],
      [verificationValues({ nodePorts: { grpc: 8081, http: 30080 } }), /nodePorts\.grpc: Must be greater than or equal to 30000/],
      [verificationValues({ securityContext: { privileged: true } }), /Additional property securityContext is not allowed/],
      [verificationValues({ podSecurityContext: { runAsUser: 1000 } }), /Additional property podSecurityContext is not allowed/],
      [verificationValues({ httpPort: 9090 }), /grpcPort and httpPort are both 9090/],
      [verificationValues({ nodePorts: { grpc: 30081, http: 30081 } }), /nodePorts\.grpc and nodePorts\.http are both 30081/],
      [verificationValues({ tpmOverride: { nodeSelector: { a: 'b' } } }), /tpmOverride: hostPath is required/],
      [verificationValues({ tpmOverride: { nodeSelector: { a: 'b' }, hostPath: '/run/tpm.sock' }, affinity: { nodeAffinity: {} } }), /tpmOverride places its nodes by node affinity; it cannot be combined with affinity/],
    ] as const) {
      assert.match(templateError(values), reason);
    }
    assert.match(templateError(umbrellaValues({ verificationservice: { tmp: {} } }), 'asterism-services'), /verificationservice:\s*\n- \(root\): Additional property tmp is not allowed/);
  });
});
