#!/usr/bin/env node
/** asterism CLI: `init` creates a cluster through the first node's attested InitServer; `verify` attests a node; `recover` unlocks nodes after a full control-plane outage. */
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import {
  AzureTdxValidator,
  CachedTdxCollateralSource,
  CollateralCache,
  pcsCollateralFetcher,
  QemuTdxValidator,
  validatorFor,
  type AttestationConfig,
  type Validator,
} from '@asterism/attestation';
import { atlsChannelCredentials } from '@asterism/atls';
import { init } from '@asterism/proto';
import { attestationConfig } from './config/attestation-flags.js';
import { ConfigError, loadCliConfig } from './config/cli-config.js';
import { ServicesDeployError } from './init/deploy-services.js';
import { InitCommandError } from './init/init-command.js';
import { initCommand } from './init/init-cli.js';
import { RecordingValidator } from './verify/recording-validator.js';
import { formatMeasurementTable, measurementRows } from './verify/report.js';
import { recoverCommand } from './recover/recover-cli.js';
import { EXIT, seconds, UsageError, withPort } from './usage.js';
import { verifyEndpoint } from './verify/verify-endpoint.js';
import { parseClusterId, VerifyNodeError } from './verify/running-node.js';
import { formatSnpReport, snpReportOf } from './verify/snp-report.js';
import { formatTdxReport, RecordingTdxVerifier, tdBodyOf } from './verify/tdx-report.js';

const USAGE = `Usage: asterism <command> [flags]

Commands:
  init     initialize the first control-plane node and create the cluster
  verify   attest a node and compare its measurements with the expected ones
  recover  unlock nodes that wait for recovery (every control plane rebooted at once)
  help     show this help (also: asterism <command> --help)

Settings come from flags, then from the config file (default ./asterism-conf.yaml):
  clusterName, kubernetesVersion, apiServerCertSANs, serviceCIDR, initSecretFile,
  attestation: { variant, configFile }`;

const VERIFY_USAGE = `Usage: asterism verify (--endpoint <host[:port]> | --node <host[:port]>) [flags]

--endpoint: a running node's verification service (plain gRPC, port 30081 if omitted): asks for
an attestation document over a fresh nonce, validates it and prints every PCR, expected vs actual;
with --cluster-id also checks that PCR 15 carries that cluster ID.
--node: a node that is not initialised yet: its InitServer (aTLS, port 9000 if omitted).

TDX nodes: MRTD and RTMR0..3 as indices 0..4, the TCB status from Intel's collateral, or the
failing check.

Flags:
  --endpoint <host[:port]>      a running node's verification service
  --node <host[:port]>          a fresh node's InitServer
  --cluster-id <id>             expected cluster ID (base64 as in asterism-id.json, or hex); --endpoint only
  -o, --output <f>              table (default), json, or raw (the attestation document); --endpoint only
  --config <file>               config file (default ./asterism-conf.yaml if present)
  --variant <v>                 attestation variant, e.g. qemu-vtpm
  --attestation-config <file>   JSON attestation config with the expected measurements
  --timeout <seconds>           connection timeout (default 30)

Exit codes: 0 accepted; 1 refused (measurements, attestation or cluster ID); 2 usage; 3 unreachable.`;

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
      endpoint: { type: 'string' },
      'cluster-id': { type: 'string' },
      output: { type: 'string', short: 'o' },
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
  if (!values.node === !values.endpoint) throw new UsageError('exactly one of --endpoint (a running node) and --node (a fresh node) is required');
  const output = values.output ?? 'table';
  if (output !== 'table' && output !== 'json' && output !== 'raw') throw new UsageError(`unknown --output "${output}": want table, json or raw`);
  if (values.node && (values['cluster-id'] || values.output)) throw new UsageError('--cluster-id and --output need --endpoint (a running node)');
  const clusterId = values['cluster-id'] === undefined ? undefined : parseClusterId(values['cluster-id']);
  const att = await attestationConfig(values, file);
  if (values.endpoint) {
    const out = { stdout: (t: string) => process.stdout.write(t), stderr: (t: string) => process.stderr.write(t) };
    return verifyEndpoint(att, { endpoint: withPort(values.endpoint, 30081), ...(clusterId ? { clusterId } : {}), timeoutMs: seconds(values.timeout, 30) * 1000, output }, out);
  }
  if (!values.node) throw new UsageError('--node is required');
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
    return EXIT.unreachable;
  }
  if (recorder.pcrs) process.stdout.write(`${formatMeasurementTable(measurementRows(att.measurements, recorder.pcrs))}\n`);
  const tdBody = recorder.document ? tdBodyOf(recorder.document) : undefined;
  if (tdBody) process.stdout.write(`${formatTdxReport(tdBody, tdx.last)}\n`);
  const snpReport = recorder.document ? snpReportOf(recorder.document) : undefined;
  if (snpReport) process.stdout.write(`${formatSnpReport(snpReport, recorder.outcome)}\n`);
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
      case 'recover':
        return await recoverCommand(rest, { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) });
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
      return EXIT.usage;
    }
    if (err instanceof VerifyNodeError) {
      process.stderr.write(`asterism ${command}: ${err.message}\n`);
      return EXIT.usage;
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
