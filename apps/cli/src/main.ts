#!/usr/bin/env node
/** asterism CLI: `init` creates a cluster through the first node's attested InitServer; `verify` attests a node. */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import {
  AzureTdxValidator,
  CachedTdxCollateralSource,
  CollateralCache,
  pcsCollateralFetcher,
  QemuTdxValidator,
  unmarshalAttestationConfig,
  validatorFor,
  Variant,
  type AttestationConfig,
  type Validator,
} from '@asterism/attestation';
import { atlsChannelCredentials } from '@asterism/atls';
import { init } from '@asterism/proto';
import { ConfigError, loadCliConfig, type CliConfig } from './config/cli-config.js';
import { GrpcInitConnector } from './init/grpc-connector.js';
import { DEFAULT_CHART_DIR } from './init/chart-location.js';
import { HelmServicesDeployer, ServicesDeployError, spawnHelm } from './init/deploy-services.js';
import { InitCommandError, runInit } from './init/init-command.js';
import { RecordingValidator } from './verify/recording-validator.js';
import { formatMeasurementTable, measurementRows } from './verify/report.js';
import { formatTdxReport, RecordingTdxVerifier, tdBodyOf } from './verify/tdx-report.js';

const USAGE = `Usage: asterism <command> [flags]

Commands:
  init     initialize the first control-plane node and create the cluster
  verify   attest a node and compare its measurements with the expected ones
  help     show this help (also: asterism <command> --help)

Settings come from flags, then from the config file (default ./asterism-conf.yaml):
  clusterName, kubernetesVersion, apiServerCertSANs, serviceCIDR, initSecretFile,
  attestation: { variant, configFile }`;

const INIT_USAGE = `Usage: asterism init --endpoint <host[:port]> [flags]

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
  --kubernetes-version <v>      Kubernetes version to request
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
  --image-repository <prefix>   image prefix of joinservice/keyservice (default localhost/asterism:
                                the images "npx nx run deploy:images" builds)
  --csp <csp>                   cloud provider for the joinservice: AWS, Azure, GCP, OpenStack, QEMU
                                (default QEMU)
  --chart <dir>                 the asterism-services chart (default: deploy/charts of this build)
  --helm <path>                 helm binary (default $HELM, else "helm" on PATH)
  --helm-timeout <seconds>      how long Helm waits for the pods (default 600)`;

const VERIFY_USAGE = `Usage: asterism verify --node <host[:port]> [flags]

Connects to a node's attested endpoint (the InitServer on port 9000 by default), checks its
attestation document and prints every PCR: expected vs actual (TDX nodes: MRTD and RTMR0..3 as
indices 0..4, the TCB status from Intel's collateral, or the failing check). Exit code 0 when the
node is accepted, 1 when it is refused.

Flags:
  --node <host[:port]>          the node to attest
  --config <file>               config file (default ./asterism-conf.yaml if present)
  --variant <v>                 attestation variant, e.g. qemu-vtpm
  --attestation-config <file>   JSON attestation config with the expected measurements
  --timeout <seconds>           connection timeout (default 30)`;

class UsageError extends Error {}

function withPort(hostPort: string, port: number): string {
  if (/^\[.*\]:\d+$/.test(hostPort) || /^[^:]+:\d+$/.test(hostPort)) return hostPort;
  return hostPort.includes(':') ? `[${hostPort}]:${port}` : `${hostPort}:${port}`;
}

/** The attestation config and its JSON exactly as the user wrote it (what join-config carries). */
async function attestationConfig(values: { variant?: string | undefined; 'attestation-config'?: string | undefined }, file: CliConfig): Promise<AttestationConfig & { json: string }> {
  const variantName = values.variant ?? file.attestation?.variant;
  if (!variantName) throw new UsageError('the attestation variant is required (--variant or attestation.variant in the config file)');
  const variant = Variant.fromString(variantName);
  const path = values['attestation-config'] ?? file.attestation?.configFile;
  if (!path) {
    const json = '{"measurements":{}}';
    if (variant.name === 'dummy') return { ...unmarshalAttestationConfig(json, variant), json };
    throw new UsageError(`an attestation config with the expected measurements is required for ${variant.name} (--attestation-config)`);
  }
  const json = await readFile(path, 'utf8');
  return { ...unmarshalAttestationConfig(json, variant), json };
}

function seconds(raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new UsageError(`invalid --timeout "${raw}": want whole seconds`);
  return Number(raw);
}

async function initCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      endpoint: { type: 'string' },
      config: { type: 'string' },
      workspace: { type: 'string' },
      'init-secret-file': { type: 'string' },
      variant: { type: 'string' },
      'attestation-config': { type: 'string' },
      'cluster-name': { type: 'string' },
      'kubernetes-version': { type: 'string' },
      'apiserver-cert-san': { type: 'string', multiple: true },
      'service-cidr': { type: 'string' },
      'master-secret': { type: 'string' },
      timeout: { type: 'string' },
      conformance: { type: 'boolean' },
      'skip-helm': { type: 'boolean' },
      'skip-helm-wait': { type: 'boolean' },
      'helm-values': { type: 'string', multiple: true },
      'image-repository': { type: 'string' },
      csp: { type: 'string' },
      chart: { type: 'string' },
      helm: { type: 'string' },
      'helm-timeout': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${INIT_USAGE}\n`);
    return 0;
  }
  const file = await loadCliConfig(values.config);
  if (!values.endpoint) throw new UsageError('--endpoint is required');
  const att = await attestationConfig(values, file);
  const secretFile = values['init-secret-file'] ?? file.initSecretFile;
  let initSecret: Buffer;
  if (secretFile) initSecret = Buffer.from((await readFile(secretFile, 'utf8')).trim());
  else if (process.env.ASTERISM_INIT_SECRET) initSecret = Buffer.from(process.env.ASTERISM_INIT_SECRET);
  else throw new UsageError('the init secret is required (--init-secret-file, initSecretFile in the config file, or ASTERISM_INIT_SECRET)');
  const validator = validatorFor(att);
  const connector = new GrpcInitConnector(atlsChannelCredentials({ validators: [validator] }));
  const sans = values['apiserver-cert-san'] ?? file.apiServerCertSANs;
  const clusterName = values['cluster-name'] ?? file.clusterName;
  const version = values['kubernetes-version'] ?? file.kubernetesVersion;
  const cidr = values['service-cidr'] ?? file.serviceCIDR;
  const result = await runInit(
    connector,
    {
      endpoint: withPort(values.endpoint, 9000),
      workspace: values.workspace ?? '.',
      initSecret,
      retryForMs: seconds(values.timeout, 300) * 1000,
      ...(clusterName ? { clusterName } : {}),
      ...(version ? { kubernetesVersion: version } : {}),
      ...(sans ? { apiServerCertSans: sans } : {}),
      ...(cidr ? { serviceCidr: cidr } : {}),
      ...(values['master-secret'] ? { masterSecretFile: values['master-secret'] } : {}),
      ...(values.conformance ? { conformance: true } : {}),
    },
    { info: (line) => process.stderr.write(`${line}\n`), nodeLog: (chunk) => process.stderr.write(chunk) },
  );
  if (!values['skip-helm']) {
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
      valuesFiles: values['helm-values'] ?? [],
      skipWait: values['skip-helm-wait'] ?? false,
      timeoutSeconds: helmTimeout,
    });
  }
  process.stdout.write(`${result.kubeconfigPath}\n`);
  return 0;
}

/**
 * The validator of `asterism verify`: TDX variants get DCAP collateral live from Intel PCS (no
 * cache to persist in a one-shot CLI) and a verifier that records the TCB status for the report.
 */
function validatorForCli(att: AttestationConfig, tdx: RecordingTdxVerifier): { validator: Validator; close: () => void } {
  if (att.variant !== 'qemu-tdx' && att.variant !== 'azure-tdx') return { validator: validatorFor(att), close: () => undefined };
  const cache = new CollateralCache({ name: 'tdx-pcs', fetch: pcsCollateralFetcher(), retry: { maxAttempts: 0 } });
  const collateral = new CachedTdxCollateralSource(cache);
  const validator =
    att.variant === 'azure-tdx' ? new AzureTdxValidator({ config: att, collateral, verifier: tdx }) : new QemuTdxValidator({ measurements: att.measurements, collateral, verifier: tdx });
  return { validator, close: () => cache.close() };
}

async function verifyCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      node: { type: 'string' },
      config: { type: 'string' },
      variant: { type: 'string' },
      'attestation-config': { type: 'string' },
      timeout: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${VERIFY_USAGE}\n`);
    return 0;
  }
  const file = await loadCliConfig(values.config);
  if (!values.node) throw new UsageError('--node is required');
  const att = await attestationConfig(values, file);
  const tdx = new RecordingTdxVerifier();
  const { validator, close } = validatorForCli(att, tdx);
  const recorder = new RecordingValidator(validator);
  const target = withPort(values.node, 9000);
  const client = new init.APIClient(target, atlsChannelCredentials({ validators: [recorder] }));
  const deadline = Date.now() + seconds(values.timeout, 30) * 1000;
  // Connecting runs the aTLS handshake and the validation; no RPC is sent.
  while (!recorder.outcome && Date.now() < deadline) {
    await new Promise<void>((resolve) => client.waitForReady(Math.min(deadline, Date.now() + 2000), () => resolve()));
  }
  client.close();
  close();
  if (!recorder.outcome) {
    process.stderr.write(`asterism verify: no attested connection to ${target} within the timeout\n`);
    return 1;
  }
  if (recorder.pcrs) process.stdout.write(`${formatMeasurementTable(measurementRows(att.measurements, recorder.pcrs))}\n`);
  const tdBody = recorder.document ? tdBodyOf(recorder.document) : undefined;
  if (tdBody) process.stdout.write(`${formatTdxReport(tdBody, tdx.last)}\n`);
  if (recorder.outcome.ok) {
    process.stdout.write(`Node ${target} is attested as ${att.variant}: accepted.\n`);
    return 0;
  }
  process.stdout.write(`Node ${target} is refused: ${recorder.outcome.error.message}\n`);
  return 1;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'init':
        return await initCommand(rest);
      case 'verify':
        return await verifyCommand(rest);
      case undefined:
      case 'help':
      case '-h':
      case '--help':
        process.stdout.write(`${USAGE}\n`);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`asterism: ${(err as Error).message}\n\nRun "asterism ${command && !command.startsWith('-') ? `${command} ` : ''}--help" for usage.\n`);
      return 2;
    }
    if (err instanceof ConfigError || err instanceof InitCommandError || err instanceof ServicesDeployError) {
      process.stderr.write(`asterism ${command}: ${err.message}\n`);
      return 1;
    }
    if ((err as { code?: unknown }).code === grpc.status.UNAVAILABLE) {
      process.stderr.write(`asterism ${command}: ${(err as Error).message}\n`);
      return 1;
    }
    process.stderr.write(`asterism ${command}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`asterism: fatal: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
