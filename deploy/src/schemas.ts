/**
 * values.schema.json of the joinservice, keyservice, verificationservice, attestationmonitor and asterism-services charts, built from shared
 * definitions. Every object has additionalProperties: false, so a misspelled value fails
 * `helm template/install/lint`. `npx nx run deploy:gen-schemas` writes them; a unit test checks
 * the committed files are current.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { variantDescriptors } from '@asterism/attestation';
import { REPO_ROOT } from './bundle.js';

type Schema = Record<string, unknown>;
const CHARTS = join(REPO_ROOT, 'deploy', 'charts');
const obj = (properties: Record<string, Schema>, extra: Schema = {}): Schema => ({ type: 'object', additionalProperties: false, properties, ...extra });
const str = (description: string, extra: Schema = {}): Schema => ({ type: 'string', description, ...extra });
const int = (description: string, extra: Schema = {}): Schema => ({ type: 'integer', description, ...extra });
const bool = (description: string): Schema => ({ type: 'boolean', description });
const port = (description: string): Schema => int(description, { minimum: 1, maximum: 65535 });
const strMap = (description: string): Schema => ({ type: 'object', description, additionalProperties: { type: 'string' } });
const quantity = { type: ['string', 'number'] };

const global = obj(
  {
    keyServicePort: port('gRPC port of the keyservice (Service key-service).'),
    serviceBasePath: str('Mount path of the service configuration.', { pattern: '^/' }),
    joinConfigCMName: str('ConfigMap with attestationConfig and measurementSalt.', { minLength: 1 }),
    internalCMName: str('ConfigMap with cluster-internal settings.', { minLength: 1 }),
  },
  { description: 'Values shared by the Asterism charts.' },
);

const image = obj(
  {
    repository: str('Image repository (required).', { minLength: 1 }),
    tag: str('Image tag; empty = the chart appVersion.'),
    digest: str('Image digest; wins over the tag.', { pattern: '^(sha256:[a-f0-9]{64})?$' }),
    pullPolicy: { enum: ['Always', 'IfNotPresent', 'Never'] },
  },
  { required: ['repository'] },
);

const resources = obj({
  requests: obj({ cpu: quantity, memory: quantity, 'ephemeral-storage': quantity }),
  limits: obj({ cpu: quantity, memory: quantity, 'ephemeral-storage': quantity }),
});

const toleration = obj({
  key: { type: 'string' },
  operator: { enum: ['Exists', 'Equal'] },
  value: { type: 'string' },
  effect: { enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute', ''] },
  tolerationSeconds: { type: 'integer' },
});

const seccomp = obj({ type: { enum: ['RuntimeDefault', 'Localhost', 'Unconfined'] }, localhostProfile: { type: 'string' } });
const podSecurityContext = obj({
  runAsUser: { type: 'integer', minimum: 0 },
  runAsGroup: { type: 'integer', minimum: 0 },
  runAsNonRoot: { type: 'boolean' },
  fsGroup: { type: 'integer', minimum: 0 },
  supplementalGroups: { type: 'array', items: { type: 'integer' } },
  seccompProfile: seccomp,
});
const securityContext = obj({
  privileged: { type: 'boolean' },
  allowPrivilegeEscalation: { type: 'boolean' },
  readOnlyRootFilesystem: { type: 'boolean' },
  runAsUser: { type: 'integer', minimum: 0 },
  runAsGroup: { type: 'integer', minimum: 0 },
  runAsNonRoot: { type: 'boolean' },
  capabilities: obj({ add: { type: 'array', items: { type: 'string' } }, drop: { type: 'array', items: { type: 'string' } } }),
  seccompProfile: seccomp,
});
const probe = obj({
  initialDelaySeconds: { type: 'integer', minimum: 0 },
  periodSeconds: { type: 'integer', minimum: 1 },
  timeoutSeconds: { type: 'integer', minimum: 1 },
  failureThreshold: { type: 'integer', minimum: 1 },
});
const updateStrategy = obj({
  type: { enum: ['RollingUpdate', 'OnDelete'] },
  rollingUpdate: obj({ maxUnavailable: { type: ['integer', 'string'] }, maxSurge: { type: ['integer', 'string'] } }),
});

const podCommon = {
  imagePullSecrets: { type: 'array', items: obj({ name: { type: 'string' } }) },
  podLabels: strMap('Extra pod labels.'),
  podAnnotations: strMap('Extra pod annotations.'),
  priorityClassName: { type: 'string' },
  nodeSelector: strMap('Node selector of the DaemonSet.'),
  tolerations: { type: 'array', items: toleration },
  affinity: { type: 'object', description: 'Pod affinity (passed through).' },
  resources,
  podSecurityContext,
  securityContext,
  probes: obj({ liveness: probe, readiness: probe }),
  updateStrategy,
  serviceAccount: obj({ name: str('ServiceAccount name.', { minLength: 1 }) }),
  logVerbosity: int('Log verbosity (-v).', { minimum: -10, maximum: 10 }),
  extraArgs: { type: 'array', items: { type: 'string' }, description: 'Extra command-line flags.' },
  metricsPort: port('Prometheus /metrics port.'),
  prometheusAnnotations: bool('Add prometheus.io/* pod annotations.'),
  enabled: bool('Used by the umbrella chart to turn the subchart off.'),
  global,
  image,
};

/** Every attestation variant of the variant table (libs/attestation; docs/adr/0035-variant-descriptor-table.md), in its order. */
const variantNames = () => variantDescriptors().map((d) => d.variant.name);

/** Built on demand, so the variant list is the table's at that moment. */
const joinservice = (): Schema =>
  obj(
  {
    ...podCommon,
    csp: { enum: ['AWS', 'Azure', 'GCP', 'OpenStack', 'QEMU'], description: 'Cloud provider (--cloud-provider).' },
    attestationVariant: str('Attestation variant of joining nodes (required).', {
      enum: variantNames(),
    }),
    metadataUrl: str('QEMU metadata API base URL (--metadata-url); empty = default.', { pattern: '^(https?://.+)?$' }),
    identityBinding: { enum: ['strict', 'off', false], description: 'YAML 1.1 reads an unquoted off as false, which means off too. strict: disks bound to the attestation key and node name of their first join, names and control-plane role from the metadata source (--identity-binding, docs/adr/0008); off: the reference behaviour.' },
    joinServicePort: port('Container port of join.API.'),
    joinServiceNodePort: int('NodePort of Service join-service.', { minimum: 30000, maximum: 32767 }),
    joinServiceExternalTrafficPolicy: { enum: ['Cluster', 'Local'], description: 'externalTrafficPolicy of Service join-service; Local: only the dialled node\'s pod answers and the peer address is kept.' },
    keyServiceName: str('Service name of the keyservice.', { minLength: 1 }),
    keyServiceEndpoint: str('host:port of the keyservice instead of <keyServiceName>.<namespace>:<port> (clusters without DNS); $(VAR) references to the Service environment are expanded by the kubelet.'),
    kubeadmConfigCMName: str('ConfigMap with the kubeadm ClusterConfiguration.', { minLength: 1 }),
    kubernetesHostPath: str('Host folder with admin.conf and pki/.', { pattern: '^/' }),
    sshStateHostPath: str('Host SSH state folder to mount; empty = none.', { pattern: '^(/.*)?$' }),
    gcpCredentialsSecret: str('Secret with key.json for csp=GCP.'),
    rbac: obj({ create: bool('Create Role/ClusterRole and bindings.') }),
  },
  { $schema: 'http://json-schema.org/draft-07/schema#', title: 'Asterism joinservice chart values', required: ['image', 'attestationVariant', 'csp'] },
);

/** A base64 string; the minimum lengths apply when createSecret (see the `then` below). */
const base64Str = (d: string): Schema => str(d, { pattern: '^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$' });
const keyservice = obj(
  {
    ...podCommon,
    masterSecret: base64Str('Master secret, base64 (>= 16 bytes); required when createSecret.'),
    salt: base64Str('Salt, base64 (>= 32 bytes); required when createSecret.'),
    createSecret: bool('Create the immutable Secret from masterSecret/salt (else it must exist).'),
    masterSecretName: str('Secret with the master secret and salt.', { minLength: 1 }),
    masterSecretKeyName: str('Key of the master secret in the Secret.', { minLength: 1 }),
    saltKeyName: str('Key of the salt in the Secret.', { minLength: 1 }),
    networkPolicy: obj({
      enabled: bool('Create the NetworkPolicy of the keyservice.'),
      joinServiceLabels: strMap('Labels of the pods allowed to call the keyservice (the joinservice).'),
      clientLabels: strMap('Labels of other pods (same namespace) allowed to call the keyservice, e.g. a bootstrapper running as a pod.'),
      bootstrapperCIDRs: { type: 'array', items: { type: 'string', pattern: '^[0-9a-fA-F.:]+/[0-9]{1,3}$' }, description: 'ipBlocks allowed to call the keyservice (the bootstrapper on control-plane hosts at init).' },
      metricsFrom: { type: 'array', items: { type: 'object' }, description: 'NetworkPolicyPeers allowed to scrape metrics; empty = everyone.' },
    }),
  },
  {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Asterism keyservice chart values',
    required: ['image'],
    if: { properties: { createSecret: { const: true } } },
    // 24 base64 characters are at least 16 bytes, 44 at least 31: the chart's template checks the
    // decoded lengths (16 and 32 bytes, docs/protocol/init-validation.md).
    then: { required: ['masterSecret', 'salt'], properties: { masterSecret: { minLength: 24 }, salt: { minLength: 44 } } },
  },
);

const nodePort = (description: string): Schema => int(description, { minimum: 30000, maximum: 32767 });
const { podSecurityContext: _podSc, securityContext: _sc, metricsPort: _mp, prometheusAnnotations: _pa, ...podBasics } = podCommon;
// No security-context values: the template derives them from what the TPM needs (privileged only
// for a device or configfs-tsm), so a values file cannot hand the pod more.
const verificationservice = (): Schema =>
  obj(
  {
    ...podBasics,
    attestationVariant: str('Attestation variant of the nodes (required).', { enum: variantNames() }),
    tpm: obj({
      kind: { enum: ['device', 'socket'], description: 'device: a TPM character device, the container runs privileged; socket: a swtpm Unix socket, no privilege and no capability.' },
      hostPath: str('Path of the TPM on the node, mounted at the same path in the container.', { pattern: '^/.+' }),
    }),
    tpmOverride: obj(
      {
        nodeSelector: strMap('The nodes whose TPM is reached otherwise; a second DaemonSet runs there.'),
        kind: { enum: ['device', 'socket'], description: 'How those nodes expose their TPM (default socket).' },
        hostPath: str('Path of the TPM on those nodes.', { pattern: '^/.+' }),
      },
      { description: 'A second DaemonSet for the nodes matching nodeSelector, with this TPM; empty = one DaemonSet.', if: { required: ['nodeSelector'] }, then: { required: ['hostPath'] } },
    ),
    firmwareEventLog: bool('Mount /sys/kernel/security read-only (firmware event log of the cloud vTPM variants).'),
    grpcPort: port('Container port of verify.API (gRPC).'),
    httpPort: port('Container port of the HTTP endpoint.'),
    nodePorts: obj({ grpc: nodePort('NodePort of the gRPC port.'), http: nodePort('NodePort of the HTTP port.') }),
  },
  { $schema: 'http://json-schema.org/draft-07/schema#', title: 'Asterism verification-service chart values', required: ['image', 'attestationVariant'] },
);

const { probes: _probes, updateStrategy: _us, ...monitorBasics } = podCommon;
const attestationmonitor = (): Schema =>
  obj(
  {
    ...monitorBasics,
    attestationVariant: str('Attestation variant of the nodes (required; the joinservice\'s).', { enum: variantNames() }),
    replicas: int('Replicas; one works at a time (Lease).', { minimum: 1, maximum: 5 }),
    intervalSeconds: int('Seconds between rounds.', { minimum: 5, maximum: 3600 }),
    jitterPercent: int('Random spread of each interval, percent.', { minimum: 0, maximum: 50 }),
    timeoutSeconds: int('Per-node deadline.', { minimum: 1, maximum: 120 }),
    graceSeconds: int('An unreachable node is unverified and quarantined after this.', { minimum: 0, maximum: 86400 }),
    concurrency: int('Nodes checked at once.', { minimum: 1, maximum: 64 }),
    verifyPort: port('The verification service gRPC NodePort on every node.'),
    clusterId: str('Cluster ID (base64 or hex); empty = derived through the keyservice.'),
    keyServiceEndpoint: str('host:port of the keyservice instead of key-service.<namespace>:<port>; $(VAR) references to the Service environment are expanded by the kubelet.'),
  },
  { $schema: 'http://json-schema.org/draft-07/schema#', title: 'Asterism attestation-monitor chart values', required: ['image', 'attestationVariant'] },
);

const umbrella = obj(
  {
    global,
    joinservice: { type: 'object', description: 'Values of the joinservice subchart (see its values.schema.json).' },
    keyservice: { type: 'object', description: 'Values of the keyservice subchart (see its values.schema.json).' },
    verificationservice: { type: 'object', description: 'Values of the verification-service subchart (see its values.schema.json).' },
    attestationmonitor: { type: 'object', description: 'Values of the attestation-monitor subchart (see its values.schema.json).' },
  },
  { $schema: 'http://json-schema.org/draft-07/schema#', title: 'Asterism services umbrella chart values' },
);

/** Chart name -> schema. */
export function valuesSchemas(): Map<string, Schema> {
  return new Map([
    ['joinservice', joinservice()],
    ['keyservice', keyservice],
    ['verificationservice', verificationservice()],
    ['attestationmonitor', attestationmonitor()],
    ['asterism-services', umbrella],
  ]);
}

/** The text written to `<chart>/values.schema.json`. */
export function schemaText(schema: Schema): string {
  return `${JSON.stringify(schema, null, 2)}\n`;
}

export function schemaPath(chart: string): string {
  return join(CHARTS, chart, 'values.schema.json');
}

export function writeValuesSchemas(): string[] {
  return [...valuesSchemas()].map(([chart, schema]) => {
    writeFileSync(schemaPath(chart), schemaText(schema));
    return schemaPath(chart);
  });
}

export function committedSchemaText(chart: string): string {
  return readFileSync(schemaPath(chart), 'utf8');
}
