import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { atlsChannelCredentials } from '@asterism/atls';
import { parseImageOverlay, supportedKubernetesVersions, versionRow, VersionsError, wireComponents, type ImageOverlay, type WireComponent } from '@asterism/versions';
import { attestationConfig } from '../config/attestation-flags.js';
import { loadCliConfig, type CliConfig } from '../config/cli-config.js';
import { seconds, UsageError, withPort } from '../usage.js';
import { buildCliValidator } from '../validators/cli-validator.js';
import { validatorOptions, VALIDATOR_FLAG_OPTIONS, VALIDATOR_FLAGS_USAGE } from '../validators/validator-flags.js';
import { DEFAULT_CHART_DIR } from './chart-location.js';
import { HelmServicesDeployer, spawnHelm } from './deploy-services.js';
import { GrpcInitConnector } from './grpc-connector.js';
import { runInit, type InitResult } from './init-command.js';

/** Help text of `asterism init`. */
export const INIT_USAGE = `Usage: asterism init --endpoint <host[:port]> [flags]

Generates the master secret and a measurement salt, attests the node (aTLS, expected
measurements from the attestation config), sends the init request, streams progress, and
writes asterism-admin.conf, asterism-mastersecret.json and asterism-id.json (mode 0600) into the
workspace. Retries only while the node is unreachable.

Flags:
  --endpoint <host[:port]>      the first node's init endpoint (port 9000 if omitted)
  --config <file>               config file (default ./asterism-conf.yaml if present)
  --workspace <dir>             where outputs are written (default .)
  --init-secret-file <file>     the init secret (or ASTERISM_INIT_SECRET)
  --variant <v>                 attestation variant of the node, e.g. qemu-vtpm
  --attestation-config <file>   JSON attestation config of the variant (expected measurements)
  --cluster-name <name>         default "constellation" (the node's default)
  --kubernetes-version <v>      Kubernetes version of the cluster (default: the newest supported;
                                supported: ${supportedKubernetesVersions().join(', ')})
  --artifact-base-url <url>     where the node fetches that version's components (http, https or
                                file URL; docs/protocol/components.md). Without it the node image
                                must carry the Kubernetes binaries
  --image-overlay <file>        this build's service images with digests (image-overlay.json of
                                the image build): nodes import them with the components, the
                                charts name them by digest (needs --artifact-base-url)
  --apiserver-cert-san <san>    extra API server certificate SAN (repeatable)
  --service-cidr <cidr>         service CIDR
  --master-secret <file>        reuse this master secret file instead of generating one
  --timeout <seconds>           how long to retry an unreachable node (default 300)
  --conformance                 conformance mode: kubeadm also deploys kube-proxy

Services (after init, with Helm; docs/protocol/helm.md):
  --skip-helm                   do not deploy the services (the node runs them itself, e.g. the
                                local backend of tools/local-cluster)
  --skip-helm-wait              do not wait for the pods (and do not roll back): for debugging
  --helm-values <file>          extra values file for the asterism-services chart (repeatable)
  --image-repository <prefix>   image prefix of joinservice/keyservice/verification-service (default
                                localhost/asterism: the images "npx nx run deploy:images" builds)
  --csp <csp>                   cloud provider for the joinservice: AWS, Azure, GCP, OpenStack, QEMU
                                (default QEMU)
  --chart <dir>                 the asterism-services chart (default: deploy/charts of this build)
  --helm <path>                 helm binary (default $HELM, else "helm" on PATH)
  --helm-timeout <seconds>      how long Helm waits for the pods (default 600)

${VALIDATOR_FLAGS_USAGE}`;

/** Parses the flags of `asterism init` (strict: unknown flags are usage errors). */
function parseInitFlags(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      endpoint: { type: 'string' },
      workspace: { type: 'string' },
      'init-secret-file': { type: 'string' },
      'cluster-name': { type: 'string' },
      'kubernetes-version': { type: 'string' },
      'artifact-base-url': { type: 'string' },
      'image-overlay': { type: 'string' },
      'apiserver-cert-san': { type: 'string', multiple: true },
      'service-cidr': { type: 'string' },
      'master-secret': { type: 'string' },
      conformance: { type: 'boolean' },
      'skip-helm': { type: 'boolean' },
      'skip-helm-wait': { type: 'boolean' },
      'helm-values': { type: 'string', multiple: true },
      'image-repository': { type: 'string' },
      csp: { type: 'string' },
      chart: { type: 'string' },
      helm: { type: 'string' },
      'helm-timeout': { type: 'string' },
      ...VALIDATOR_FLAG_OPTIONS,
    },
  });
  return values;
}

type InitFlags = ReturnType<typeof parseInitFlags>;
type CliAttestation = Awaited<ReturnType<typeof attestationConfig>>;

/**
 * `asterism init`: attests the first node, sends the init request, writes the outputs and
 * (unless --skip-helm) deploys the services with Helm; prints the kubeconfig path.
 */
export async function initCommand(argv: string[]): Promise<number> {
  const values = parseInitFlags(argv);
  if (values.help) {
    process.stdout.write(`${INIT_USAGE}\n`);
    return 0;
  }
  const file = await loadCliConfig(values.config);
  if (!values.endpoint) throw new UsageError('--endpoint is required');
  const att = await attestationConfig(values, file);
  const initSecret = await readInitSecret(values, file);
  const overlay = values['image-overlay'] ? await readImageOverlay(values['image-overlay']) : undefined;
  const result = await initFirstNode(values, file, att, initSecret, values.endpoint, overlay);
  if (!values['skip-helm']) await deployServices(values, att, result, overlay);
  process.stdout.write(`${result.kubeconfigPath}\n`);
  return 0;
}

/** The init secret: from --init-secret-file, the config file's initSecretFile, or ASTERISM_INIT_SECRET. */
async function readInitSecret(values: InitFlags, file: CliConfig): Promise<Buffer> {
  const secretFile = values['init-secret-file'] ?? file.initSecretFile;
  if (secretFile) return Buffer.from((await readFile(secretFile, 'utf8')).trim());
  if (process.env.ASTERISM_INIT_SECRET) return Buffer.from(process.env.ASTERISM_INIT_SECRET);
  throw new UsageError('the init secret is required (--init-secret-file, initSecretFile in the config file, or ASTERISM_INIT_SECRET)');
}

/** Reads and validates an image overlay file (a usage error when it is unreadable or invalid). */
async function readImageOverlay(path: string): Promise<ImageOverlay> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(`--image-overlay ${path}: ${(err as Error).message}`);
  }
  try {
    return parseImageOverlay(text);
  } catch (err) {
    if (err instanceof VersionsError) throw new UsageError(`--image-overlay ${path}: ${err.message}`);
    throw err;
  }
}

/**
 * The requested Kubernetes version (default: the newest supported) and its components resolved
 * against the artifact base, plus the overlay's service images; an unsupported version is a usage
 * error listing the supported ones.
 */
export function kubernetesComponents(version: string | undefined, artifactBase: string | undefined, overlay?: ImageOverlay): { kubernetesVersion: string; components: WireComponent[] } {
  if (overlay && !artifactBase) throw new UsageError('--image-overlay needs --artifact-base-url (the nodes fetch the image archives from there)');
  try {
    const row = versionRow(version ?? '');
    return { kubernetesVersion: row.kubernetesVersion, components: artifactBase ? wireComponents(row, artifactBase, overlay?.images) : [] };
  } catch (err) {
    if (err instanceof VersionsError) throw new UsageError(err.message);
    throw err;
  }
}

/** Runs the init request against the attested node (flags override the config file). */
async function initFirstNode(values: InitFlags, file: CliConfig, att: CliAttestation, initSecret: Buffer, endpoint: string, overlay: ImageOverlay | undefined): Promise<InitResult> {
  const v = await buildCliValidator(att, validatorOptions(values));
  const connector = new GrpcInitConnector((onConnectionError) => atlsChannelCredentials({ validators: [v.validator], onConnectionError }));
  const sans = values['apiserver-cert-san'] ?? file.apiServerCertSANs;
  const clusterName = values['cluster-name'] ?? file.clusterName;
  const { kubernetesVersion, components } = kubernetesComponents(values['kubernetes-version'] ?? file.kubernetesVersion, values['artifact-base-url'] ?? file.artifactBaseURL, overlay);
  const cidr = values['service-cidr'] ?? file.serviceCIDR;
  try {
    return await runInit(
      connector,
      {
        endpoint: withPort(endpoint, 9000),
        workspace: values.workspace ?? '.',
        initSecret,
        retryForMs: seconds(values.timeout, 300) * 1000,
        ...(clusterName ? { clusterName } : {}),
        kubernetesVersion,
        components,
        ...(sans ? { apiServerCertSans: sans } : {}),
        ...(cidr ? { serviceCidr: cidr } : {}),
        ...(values['master-secret'] ? { masterSecretFile: values['master-secret'] } : {}),
        ...(values.conformance ? { conformance: true } : {}),
      },
      { info: (line) => process.stderr.write(`${line}\n`), nodeLog: (chunk) => process.stderr.write(chunk) },
    );
  } finally {
    await v.close();
  }
}

/** Deploys the asterism-services chart with Helm into the new cluster. */
async function deployServices(values: InitFlags, att: CliAttestation, result: InitResult, overlay: ImageOverlay | undefined): Promise<void> {
  const csp = values.csp ?? 'QEMU';
  if (!['AWS', 'Azure', 'GCP', 'OpenStack', 'QEMU'].includes(csp)) throw new UsageError(`unknown --csp "${csp}": want AWS, Azure, GCP, OpenStack or QEMU`);
  const helmTimeout = seconds(values['helm-timeout'], 600);
  const deployer = new HelmServicesDeployer({
    chartDir: values.chart ?? DEFAULT_CHART_DIR,
    helm: spawnHelm(values.helm ?? process.env.HELM ?? 'helm', (helmTimeout + 60) * 1000),
    progress: (line) => process.stderr.write(`${line}\n`),
  });
  await deployer.deploy({
    kubeconfigPath: result.kubeconfigPath,
    masterSecret: result.masterSecret,
    measurementSalt: result.measurementSalt,
    attestationConfigJson: att.json,
    variant: String(att.variant),
    csp,
    imageRepository: values['image-repository'] ?? 'localhost/asterism',
    ...(overlay ? { imageDigests: Object.fromEntries(overlay.images.map((i) => [i.name, i.digest])) } : {}),
    valuesFiles: values['helm-values'] ?? [],
    skipWait: values['skip-helm-wait'] ?? false,
    timeoutSeconds: helmTimeout,
  });
}
